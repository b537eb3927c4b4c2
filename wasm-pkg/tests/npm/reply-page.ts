// The page the browser test bundles with esbuild for ReplyView and <portal-reply>: the installed
// package's full web entry, its style sheet and its element, driven from the test through
// `window.portalTest`.
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { definePortalReply } from "portal-wasm/element";
import "portal-wasm/reply.css";

export const REPLY =
  "## The plan 👨‍👩‍👧‍👦\n\nThree days in **Kyoto**, two in *Tokyo* 🇯🇵, café stops ☕ and " +
  "[the map](https://example.com/map).\n\n- [x] trains\n- [ ] the Thai restaurant (น้ำ)\n\n" +
  "```rust\nlet days = 5;\n```\n\n| city | days |\n|---|---:|\n| Kyoto | 3 |\n| Tokyo | 2 |\n";

/** A reply in every maths notation, and no dollar sign that could be money. */
export const MATHS =
  "Euler's identity $e^{i\\pi} + 1 = 0$ and Pythagoras \\(a^2 + b^2 = c^2\\).\n\n" +
  "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$\n\nThe sum \\[\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\\] " +
  "holds, for **every** $n \\ge 1$.\n";

/** The reply in uneven chunks sliced by UTF-16 unit, so some end inside a surrogate pair. */
function chunks(reply: string): string[] {
  const out = [];
  for (let at = 0, n = 0; at < reply.length; n++) {
    const end = Math.min(reply.length, at + 1 + (n % 7));
    out.push(reply.slice(at, end));
    at = end;
  }
  return out;
}

async function stream(push: (chunk: string) => void, count = Infinity) {
  for (const chunk of chunks(REPLY).slice(0, count)) {
    push(chunk);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

await init({ module_or_path: wasmUrl });
definePortalReply(ReplyView);

const box = (id: string) => {
  const element = document.createElement("div");
  element.id = id;
  document.body.append(element);
  return element;
};

Object.assign(window, {
  portalTest: {
    REPLY,
    /** A ReplyView played to its end; resolves with what `settled` gave and both DOMs. */
    async played() {
      const live = box("live");
      const view = new ReplyView(live);
      await stream((chunk) => view.push(chunk));
      view.finish();
      const settled = await view.settled;
      const reloaded = box("reloaded");
      ReplyView.drawReply(reloaded, REPLY);
      return { settled, live: live.innerHTML, reloaded: reloaded.innerHTML, drawnLength: view.drawnLength,
        className: live.className };
    },
    /** A ReplyView cancelled halfway: whether `settled` resolved within a second, and what stays. */
    async cancelled() {
      const element = box("cancelled");
      const view = new ReplyView(element, { reducedMotion: true });
      let settled = false;
      view.settled.then(() => { settled = true; });
      await stream((chunk) => view.push(chunk), 20);
      view.cancel();
      await stream((chunk) => view.push(chunk));
      view.finish();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { settled, reduced: element.dataset.reducedMotion, text: element.textContent };
    },
    /** <portal-reply> played to its end. */
    async element() {
      const element = document.createElement("portal-reply");
      document.body.append(element);
      await stream((chunk) => element.push(chunk));
      element.finish();
      const settled = await element.settled;
      const reloaded = document.createElement("portal-reply");
      reloaded.drawReply(REPLY);
      return { settled, live: element.innerHTML, reloaded: reloaded.innerHTML,
        display: getComputedStyle(element).display };
    },
    /**
     * A maths reply pushed one grapheme cluster at a time: the element's text in every animation
     * frame until it settles, and the settled and reloaded DOMs.
     */
    async maths() {
      const live = box("maths");
      const view = new ReplyView(live);
      const frames: string[] = [];
      let settled = false;
      view.settled.then(() => { settled = true; });
      const sample = () => {
        frames.push(live.textContent ?? "");
        if (!settled) requestAnimationFrame(sample);
      };
      requestAnimationFrame(sample);
      for (const { segment } of new Intl.Segmenter("und", { granularity: "grapheme" }).segment(MATHS)) {
        view.push(segment);
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
      view.finish();
      await view.settled;
      const reloaded = box("maths-reloaded");
      ReplyView.drawReply(reloaded, MATHS);
      const maths = [...live.querySelectorAll("math")];
      return {
        frames,
        live: live.innerHTML,
        reloaded: reloaded.innerHTML,
        maths: maths.map((math) => ({
          namespace: math.namespaceURI,
          display: getComputedStyle(math).display,
          width: math.getBoundingClientRect().width,
        })),
        code: live.querySelectorAll("code.math").length,
      };
    },
    /** Options the view does not know. */
    refused() {
      try {
        new ReplyView(box("refused"), { reducedMotoin: true } as never);
        return null;
      } catch (error) {
        return { name: (error as Error).name, field: (error as { field?: string }).field };
      }
    },
  },
});
