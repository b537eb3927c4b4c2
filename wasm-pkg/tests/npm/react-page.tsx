// The page the browser test bundles with esbuild for portal-wasm/react: <PortalReply text=…>
// from the installed package with React 19, fed the whole reply so far as it grows (the way
// Streamdown and the AI SDK's message parts give it), driven from the test through
// `window.portalReactTest`. Every root renders in StrictMode, as Vite's and Next's templates do:
// in React's development build it mounts each component, unmounts it and mounts it again.
import { createRef, StrictMode } from "react";
import { flushSync } from "react-dom";
import { createRoot, type Root } from "react-dom/client";
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { createPortalReply, type PortalReplyHandle, type PortalReplyProps } from "portal-wasm/react";
import "portal-wasm/reply.css";
import { Message } from "./readme-react";

export const REPLY =
  "## The plan 👨‍👩‍👧‍👦\n\nThree days in **Kyoto**, two in *Tokyo* 🇯🇵, café stops ☕.\n\n" +
  "- trains 👩🏽‍💻\n- the Thai restaurant (น้ำ)\n";
export const OTHER = "# Another reply\n\n1. first\n2. second\n";

/**
 * The reply's prefixes, growing by 1 to 5 code points at a time, so some end inside a grapheme
 * cluster (between the people of the family emoji, before a skin tone); never inside a surrogate
 * pair, which a JavaScript stream's text never is.
 */
function prefixes(reply: string): string[] {
  const points = Array.from(reply);
  const out = [];
  for (let at = 0, n = 0; at < points.length; n++) {
    at = Math.min(points.length, at + 1 + (n % 5));
    out.push(points.slice(0, at).join(""));
  }
  return out;
}

/** Where each grapheme cluster of `reply` ends, in UTF-16 units. */
const clusterEnds = (reply: string) =>
  [...new Intl.Segmenter("und", { granularity: "grapheme" }).segment(reply)].map((s) => s.index + s.segment.length);

await init({ module_or_path: wasmUrl });
const PortalReply = createPortalReply(ReplyView);

// Animation frames requested, counted, to see that an unmounted reply asks for none.
let frames = 0;
const request = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => {
  frames++;
  return request(callback);
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or an error after 20 s, so that a reply that never settles fails the test. */
const within = <T,>(promise: Promise<T>, what: string) =>
  Promise.race([promise, pause(20_000).then(() => Promise.reject(new Error(`${what}: never settled`)))]);

/** A root in a box of its own; `show` renders the component with these props, synchronously. */
function mount(id: string) {
  const box = document.createElement("section");
  box.id = id;
  document.body.append(box);
  const root: Root = createRoot(box);
  const ref = createRef<PortalReplyHandle>();
  const show = (props: PortalReplyProps) =>
    flushSync(() => root.render(<StrictMode><PortalReply ref={ref} {...props} /></StrictMode>));
  const reply = () => box.querySelector<HTMLDivElement>("div.portal-reply")!;
  return { box, root, ref, show, reply };
}

/** The DOM `ReplyView.drawReply` draws for `text`: what a settled reply is. */
function reloaded(text: string): string {
  const element = document.createElement("div");
  ReplyView.drawReply(element, text);
  return element.innerHTML;
}

Object.assign(window, {
  portalReactTest: {
    REPLY,
    OTHER,
    /** The text grows over time, then `streaming` turns false; the reply plays out and settles. */
    async streamed() {
      const { show, reply, ref } = mount("streamed");
      let early: string | null = null;
      const drawn: number[] = [];
      const text = await within(new Promise<string>((resolve) => {
        (async () => {
          for (const text of prefixes(REPLY)) {
            show({ text, className: "chat", onSettled: (settled) => (early = settled) });
            drawn.push(ref.current!.drawnLength);
            await pause(12);
          }
          show({ text: REPLY, streaming: false, className: "chat", onSettled: resolve });
        })();
      }), "streamed");
      return {
        text,
        early,
        live: reply().innerHTML,
        reloaded: reloaded(REPLY),
        className: reply().className,
        drawnLength: ref.current!.drawnLength,
        headings: [...reply().querySelectorAll("h2")].map((h) => h.textContent),
        items: [...reply().querySelectorAll("li")].map((li) => li.textContent),
        drawn,
        ends: [0, ...clusterEnds(REPLY)],
      };
    },
    /** A reply replaced mid-stream by a text that does not extend it: drawn settled at once. */
    async replaced() {
      const { show, reply } = mount("replaced");
      const growing = prefixes(REPLY);
      for (const text of growing.slice(0, 12)) {
        show({ text });
        await pause(12);
      }
      show({ text: OTHER });
      const atOnce = reply().innerHTML; // no frame has run since
      await pause(700);
      return { atOnce, later: reply().innerHTML, reloaded: reloaded(OTHER) };
    },
    /** A first render not streaming (a reloaded conversation): settled at once, reported. */
    reloaded() {
      const { show, reply } = mount("reloaded");
      let settled: string | null = null;
      show({ text: REPLY, streaming: false, onSettled: (text) => (settled = text) });
      return { html: reply().innerHTML, reloaded: reloaded(REPLY), settled };
    },
    /** Unmounted mid-stream: how many animation frames were asked for afterwards. */
    async unmounted() {
      const { show, root, box } = mount("unmounted");
      for (const text of prefixes(REPLY).slice(0, 15)) {
        show({ text });
        await pause(12);
      }
      const before = frames;
      await pause(100);
      const whilePlaying = frames - before;
      flushSync(() => root.unmount());
      await pause(50); // a frame already asked for may still run once
      const after = frames;
      await pause(500);
      return { whilePlaying, afterUnmount: frames - after, children: box.childElementCount };
    },
    /** The README's example: an AI SDK message's text part, streaming and then done. */
    async readme() {
      const box = document.createElement("section");
      document.body.append(box);
      const root = createRoot(box);
      const show = (text: string, state: "streaming" | "done") =>
        flushSync(() =>
          root.render(<StrictMode><Message parts={[{ type: "step-start" }, { type: "text", text, state }]} /></StrictMode>));
      for (const text of prefixes(REPLY)) {
        show(text, "streaming");
        await pause(12);
      }
      show(REPLY, "done");
      const expected = reloaded(REPLY);
      const html = () => box.querySelector(".portal-reply")!.innerHTML;
      const playing = html() !== expected;
      for (let waited = 0; html() !== expected && waited < 20_000; waited += 50) await pause(50);
      return { html: html(), reloaded: expected, playing };
    },
    /** Without `text`: chunks pushed through the ref, some cut inside a surrogate pair. */
    async pushed() {
      const { show, ref, reply } = mount("pushed");
      const settled = new Promise<string>((resolve) => show({ onSettled: resolve }));
      for (let at = 0, n = 0; at < REPLY.length; n++) {
        const end = Math.min(REPLY.length, at + 1 + (n % 7));
        ref.current!.push(REPLY.slice(at, end));
        at = end;
        await pause(10);
      }
      ref.current!.finish();
      const text = await within(settled, "pushed");
      return { text, live: reply().innerHTML, reloaded: reloaded(REPLY) };
    },
  },
});
