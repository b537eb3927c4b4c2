// The page the browser test bundles with esbuild for Vue 3: the README's StreamedReply
// (readme-vue.js, written from the installed package's README), a render function drawing
// <portal-reply> with a ref it pushes the streamed reply into and bound attributes, driven from
// the test through `window.portalVueTest`.
import { createApp, h } from "vue";
import { chunks, REPLY, stage } from "./framework-reply";
// @ts-ignore: written by the test from the README, plain JavaScript
import { StreamedReply } from "./readme-vue.js";

/** StreamedReply mounted in a Vue app with `reducedMotion`, traced until it settles. */
function played(id: string, reducedMotion?: string) {
  const { box, trace } = stage(id);
  const settled = new Promise<string>((resolve) => {
    createApp({ render: () => h(StreamedReply, { chunks: chunks(), reducedMotion, onSettled: resolve }) }).mount(box);
  });
  return trace(settled);
}

Object.assign(window, {
  portalVueTest: {
    REPLY,
    reduced: () => played("vue-reduced", "true"),
    moving: () => played("vue-moving", "false"),
  },
});
