// The page the browser test bundles with esbuild for Svelte 5: the README's component, compiled by
// the test with svelte/compiler into readme-svelte.js, binding <portal-reply> with bind:this to
// push the streamed reply into and with bound attributes, driven from the test through
// `window.portalSvelteTest`.
import { mount } from "svelte";
import { chunks, REPLY, stage } from "./framework-reply";
// @ts-ignore: compiled by the test from the README's component
import StreamedReply from "./readme-svelte.js";

/** The component mounted with `reducedMotion`, traced until it settles. */
function played(id: string, reducedMotion?: string) {
  const { box, trace } = stage(id);
  const settled = new Promise<string>((resolve) => {
    mount(StreamedReply, { target: box, props: { chunks: chunks(), reducedMotion, onsettled: resolve } });
  });
  return trace(settled);
}

Object.assign(window, {
  portalSvelteTest: {
    REPLY,
    reduced: () => played("svelte-reduced", "true"),
    moving: () => played("svelte-moving", "false"),
  },
});
