import type { PlayoutOptions } from "portal-wasm/playout/web";
import { usePlayout } from "./usePlayout";

/** A streamed reply, played out one whole character at a time with a caret while it streams. */
export function PlayoutReply({
  chunks,
  options,
}: {
  chunks: AsyncIterable<string> | null;
  options?: PlayoutOptions;
}) {
  const { text, caret, done } = usePlayout(chunks, options);
  return (
    <div className="reply" data-state={done ? "done" : "streaming"}>
      {text}
      {caret && <span className="caret" aria-hidden="true" />}
    </div>
  );
}
