// The page the browser test bundles with esbuild: the React example's <PlayoutReply> plays a
// reply streamed in uneven chunks, some cut inside an emoji, from the installed package.
import { createRoot } from "react-dom/client";
import init from "portal-wasm/playout/web";
import wasmUrl from "portal-wasm/playout/portal_wasm_bg.wasm";
import { PlayoutReply } from "./examples/react/PlayoutReply";

export const REPLY =
  "Here is the plan 👨‍👩‍👧‍👦 for the trip to 🇯🇵: three days in Kyoto, two in Tokyo. " +
  "Café stops are marked ☕, and the Thai restaurant (น้ำ) is booked for Friday.";

async function* stream(reply: string): AsyncGenerator<string> {
  for (let at = 0, n = 0; at < reply.length; n++) {
    const end = Math.min(reply.length, at + 1 + (n % 5));
    yield reply.slice(at, end);
    at = end;
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

await init({ module_or_path: wasmUrl });
Object.assign(window, { portalReply: REPLY });
createRoot(document.getElementById("root")!).render(<PlayoutReply chunks={stream(REPLY)} />);
