import { useEffect, useRef } from "react";
import { ReplyView, type ReplyViewOptions } from "portal-wasm/web";

/**
 * A streamed reply drawn by the package's `ReplyView` into a `<div>` this component owns: React
 * renders nothing inside it, the view draws (markdown, words resolving, the caret, settling) on
 * its own animation frames. A new `chunks` starts a new reply; unmounting cancels the one
 * playing. Initialise the wasm first (`await init(...)` from `portal-wasm/web`), and import
 * `portal-wasm/reply.css` once.
 */
export function Reply({
  chunks,
  options,
  onSettle,
}: {
  /** The reply as it streams in; chunks may end anywhere, even inside a character. */
  chunks: AsyncIterable<string> | null;
  /** Read once per reply. */
  options?: ReplyViewOptions;
  /** Called with the whole reply once it has played out and settled (not if cancelled). */
  onSettle?: (reply: string) => void;
}) {
  const element = useRef<HTMLDivElement>(null);
  const settle = useRef(onSettle);
  settle.current = onSettle;

  useEffect(() => {
    if (element.current === null || chunks === null) return;
    const view = new ReplyView(element.current, options);
    let stopped = false;
    view.settled.then((reply) => {
      if (!stopped) settle.current?.(reply);
    });
    (async () => {
      for await (const chunk of chunks) {
        if (stopped) return;
        view.push(chunk);
      }
      if (!stopped) view.finish();
    })();
    return () => {
      stopped = true;
      view.cancel();
      view.free();
    };
    // `options` is read once per reply, as the view's are.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chunks]);

  return <div ref={element} className="reply" />;
}
