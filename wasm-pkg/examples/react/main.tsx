// A page that draws a fake streamed markdown reply with <Reply> (the package's ReplyView) and,
// below it, plays a plain one with <PlayoutReply> (Playout alone). Bundle it with esbuild:
//   npx esbuild main.tsx --bundle --format=esm --outdir=dist --loader:.wasm=file
import { useState } from "react";
import { createRoot } from "react-dom/client";
import init from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import "portal-wasm/reply.css";
import { PlayoutReply } from "./PlayoutReply";
import { Reply } from "./Reply";

/** The reply in uneven chunks, as a model streams it; some end inside an emoji. */
async function* fakeStream(reply: string): AsyncGenerator<string> {
  for (let at = 0; at < reply.length; ) {
    const end = Math.min(reply.length, at + 1 + Math.floor(Math.random() * 6));
    yield reply.slice(at, end);
    at = end;
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60));
  }
}

const markdown =
  "## The plan 👨‍👩‍👧‍👦\n\nThree days in **Kyoto**, two in *Tokyo* 🇯🇵.\n\n" +
  "- [x] trains booked\n- [ ] the Thai restaurant (น้ำ)\n\n| city | days |\n|---|---:|\n| Kyoto | 3 |\n| Tokyo | 2 |\n";
const plain = "Here is the plan 👨‍👩‍👧‍👦 for the trip to 🇯🇵: three days in Kyoto, two in Tokyo.";

function App() {
  const [settled, setSettled] = useState(false);
  const [chunks] = useState(() => fakeStream(markdown));
  const [plainChunks] = useState(() => fakeStream(plain));
  return (
    <>
      <Reply chunks={chunks} onSettle={() => setSettled(true)} />
      <p>{settled ? "Settled." : "Streaming…"}</p>
      <PlayoutReply chunks={plainChunks} />
    </>
  );
}

await init({ module_or_path: wasmUrl });
createRoot(document.getElementById("root")!).render(<App />);
