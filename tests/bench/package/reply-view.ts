// The package's class: a ReplyView on the reply's element, fed the stream's chunks as they
// arrive, with the package's styles (portal-wasm/reply.css).
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import "portal-wasm/reply.css";
import { body, settled, stream } from "./source";

await init({ module_or_path: wasmUrl });

const view = new ReplyView(body);
const report = stream(
  (chunk) => view.push(chunk),
  () => view.finish(),
  () => view.drawnLength,
);
view.settled.then(() => settled(report));
