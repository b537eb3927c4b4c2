import { useEffect, useState } from "react";
import { Playout, type PlayoutOptions } from "portal-wasm/playout/web";

/** What a reply shows at one animation frame. */
export interface PlayedReply {
  /** The text revealed so far: whole characters only. */
  text: string;
  /** More is coming: draw a breathing caret after the text. */
  caret: boolean;
  /** The stream ended and everything is shown: draw the reply as settled text. */
  done: boolean;
}

const WAITING: PlayedReply = { text: "", caret: true, done: false };

/**
 * Plays a streamed reply out: reads `chunks` as they arrive and re-renders once per animation
 * frame with the characters that are due, about 0.6 s behind the stream. Chunks may end anywhere,
 * even inside an emoji. Initialise the wasm first (`await init(...)` from
 * `portal-wasm/playout/web`). A new `chunks` starts a new reply.
 */
export function usePlayout(
  chunks: AsyncIterable<string> | null,
  options?: PlayoutOptions,
): PlayedReply {
  const [reply, setReply] = useState<PlayedReply>(WAITING);

  useEffect(() => {
    setReply(WAITING);
    if (chunks === null) return;
    const playout = new Playout(options);
    let text = "";
    let frame: number | null = null;
    let stopped = false;

    const tick = (now: number) => {
      frame = null;
      if (stopped) return;
      const { newText, caret, done, nextWakeMs } = playout.tick(now);
      if (newText !== "" || done) {
        text += newText;
        setReply({ text, caret, done });
      }
      if (!done && nextWakeMs !== null) schedule();
    };
    const schedule = () => {
      if (frame === null && !stopped) frame = requestAnimationFrame(tick);
    };

    (async () => {
      for await (const chunk of chunks) {
        if (stopped) return;
        playout.push(chunk, performance.now());
        schedule();
      }
      if (stopped) return;
      playout.finish(performance.now());
      schedule();
    })();

    return () => {
      stopped = true;
      if (frame !== null) cancelAnimationFrame(frame);
      playout.free();
    };
    // `options` is read once per reply: a playout's numbers do not change while it plays.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chunks]);

  return reply;
}
