// Streamdown as its README draws a streamed reply: <Streamdown isAnimating>{text}</Streamdown>,
// rendered again with the whole text so far on every chunk, with its style sheet and the plugins
// its default install has (none: KaTeX, Shiki and Mermaid are packages of their own).
import { useEffect, useLayoutEffect } from "react";
import { createRoot } from "react-dom/client";
import { Streamdown } from "streamdown";
import "streamdown/styles.css";
import { body, settled, stream } from "./source";

const root = createRoot(body);
let text = "";
// The text React last committed: what the page shows, which Streamdown draws as it arrived.
let committed = 0;

function Reply({ text, streaming }: { text: string; streaming: boolean }) {
  useLayoutEffect(() => {
    committed = text.length;
  });
  useEffect(() => {
    if (!streaming) requestAnimationFrame(() => settled(report));
  }, [streaming]);
  return <Streamdown isAnimating={streaming}>{text}</Streamdown>;
}

const report = stream(
  (chunk) => {
    text += chunk;
    root.render(<Reply text={text} streaming />);
  },
  () => root.render(<Reply text={text} streaming={false} />),
  () => committed,
);
// Streamdown's DOM is not the drawer's: the recorder's check of the last text node is for the
// pages that report where their frame ends.
report.checkDom = false;
