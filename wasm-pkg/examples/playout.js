// Drives a plain <div> with Portal's playout engine: a fake stream pushes chunks, and
// requestAnimationFrame ticks the playout and appends what each frame reveals.
import init, { Playout } from "../pkg/portal_wasm.js";

const REPLY =
  "Here is the plan 👨‍👩‍👧‍👦 for the trip to 🇯🇵: three days in Kyoto, " +
  "two in Tokyo. Café stops are marked ☕, and the Thai restaurant (น้ำ) is booked for Friday.\n\n" +
  "After a pause the rest arrives in one burst, as when a guardrail releases a sentence: " +
  "the speed eases up instead of jumping, and nothing is ever shown half-drawn.";

const replyElement = document.getElementById("reply");
const statusElement = document.getElementById("status");

/** A small seeded random generator, so every run streams the same chunks. */
function random(seed) {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

/**
 * Calls `onChunk(text)` with pieces of `text` at uneven intervals (cut by UTF-16 index, so a
 * piece may end inside a surrogate pair or an emoji sequence), pauses once, ends with one burst,
 * then calls `onEnd()`.
 */
function fakeStream(text, onChunk, onEnd) {
  const next = random(7);
  const burstAt = text.indexOf("After a pause");
  let at = 0;
  const step = () => {
    if (at >= text.length) {
      onEnd();
      return;
    }
    const end = at >= burstAt ? text.length : Math.min(burstAt, at + 1 + Math.floor(next() * 6));
    onChunk(text.slice(at, end));
    at = end;
    const pause = at === burstAt ? 1500 : 20 + next() * 60;
    setTimeout(step, pause);
  };
  step();
}

function play() {
  const playout = new Playout();
  const caret = document.createElement("span");
  caret.className = "caret";
  replyElement.replaceChildren(caret);
  document.body.dataset.state = "streaming";
  let scheduled = false;

  const frame = (now) => {
    scheduled = false;
    const { words, caret: breathing, done, nextWakeMs, visibleClusters } = playout.tick(now);
    for (const word of words) {
      const span = document.createElement("span");
      span.className = "word";
      span.textContent = word;
      caret.before(span);
    }
    caret.hidden = !breathing;
    statusElement.textContent = `${visibleClusters} characters shown`;
    if (done) {
      // R10: a settled reply is plain text, with no per-word elements left behind.
      replyElement.textContent = playout.visibleText();
      playout.free();
      document.body.dataset.state = "done";
      return;
    }
    if (nextWakeMs !== null) schedule();
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(frame);
    }
  };

  fakeStream(
    REPLY,
    (chunk) => {
      playout.push(chunk, performance.now());
      schedule();
    },
    () => {
      playout.finish(performance.now());
      schedule();
    },
  );
}

await init();
document.getElementById("again").addEventListener("click", () => {
  if (document.body.dataset.state === "done") play();
});
play();
