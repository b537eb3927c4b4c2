// What the Vue and Svelte pages share: the engine loaded and <portal-reply> defined, the streamed
// reply, and a reply's trace (its words' blur sampled each frame while it plays, then the DOM it
// settled to beside the DOM `ReplyView.drawReply` draws for the same text).
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { definePortalReply } from "portal-wasm/element";
import "portal-wasm/reply.css";

export const REPLY =
  "## The plan 👨‍👩‍👧‍👦\n\nThree days in **Kyoto**, two in *Tokyo* 🇯🇵, café stops ☕ and more " +
  "words to resolve from a blur.\n\n- trains 👩🏽‍💻\n- the Thai restaurant (น้ำ)\n";

await init({ module_or_path: wasmUrl });
definePortalReply(ReplyView);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The reply in uneven chunks cut by UTF-16 unit (some inside a surrogate pair), as it streams. */
export async function* chunks(): AsyncGenerator<string> {
  for (let at = 0, n = 0; at < REPLY.length; n++) {
    const end = Math.min(REPLY.length, at + 1 + (n % 7));
    yield REPLY.slice(at, end);
    at = end;
    await pause(10);
  }
}

/**
 * A box for a framework to mount into, and `trace(settled)`: once `settled` resolves (within
 * 20 s), what the box's <portal-reply> drew, with how many of its live words were sampled blurred.
 */
export function stage(id: string) {
  const box = document.createElement("section");
  box.id = id;
  document.body.append(box);
  let words = 0;
  let blurred = 0;
  let sampling = true;
  requestAnimationFrame(function sample() {
    for (const word of box.querySelectorAll(".w")) {
      words++;
      if (getComputedStyle(word).filter.includes("blur")) blurred++;
    }
    if (sampling) requestAnimationFrame(sample);
  });
  async function trace(settled: Promise<string>) {
    const text = await Promise.race([settled, pause(20_000).then(() => `${id}: never settled`)]);
    sampling = false;
    const element = box.querySelector("portal-reply")!;
    const reloaded = document.createElement("div");
    ReplyView.drawReply(reloaded, REPLY);
    return {
      text,
      live: element.innerHTML,
      reloaded: reloaded.innerHTML,
      headings: [...element.querySelectorAll("h2")].map((h) => h.textContent),
      items: [...element.querySelectorAll("li")].map((li) => li.textContent),
      className: element.className,
      reducedMotion: element.getAttribute("reduced-motion"),
      dataReducedMotion: element.dataset.reducedMotion ?? null,
      words,
      blurred,
    };
  }
  return { box, trace };
}
