// A page that plays a fake streamed reply with <PlayoutReply>. Bundle it with esbuild:
//   npx esbuild main.tsx --bundle --format=esm --outdir=dist --loader:.wasm=file
import { createRoot } from "react-dom/client";
import init from "portal-wasm/playout/web";
import wasmUrl from "portal-wasm/playout/portal_wasm_bg.wasm";
import { PlayoutReply } from "./PlayoutReply";

/** The reply in uneven chunks, as a model streams it; some end inside an emoji. */
async function* fakeStream(reply: string): AsyncGenerator<string> {
  for (let at = 0; at < reply.length; ) {
    const end = Math.min(reply.length, at + 1 + Math.floor(Math.random() * 6));
    yield reply.slice(at, end);
    at = end;
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60));
  }
}

await init({ module_or_path: wasmUrl });
const reply = "Here is the plan 👨‍👩‍👧‍👦 for the trip to 🇯🇵: three days in Kyoto, two in Tokyo.";
createRoot(document.getElementById("root")!).render(<PlayoutReply chunks={fakeStream(reply)} />);
