// portal-wasm/react's <PortalReply text={text} streaming>, rendered again with the whole text so
// far on every chunk exactly as the Streamdown page renders <Streamdown>, with reply.css.
import { createRef } from "react";
import { createRoot } from "react-dom/client";
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { createPortalReply, type PortalReplyHandle } from "portal-wasm/react";
import "portal-wasm/reply.css";
import { body, settled, stream } from "./source";

await init({ module_or_path: wasmUrl });
const PortalReply = createPortalReply(ReplyView);

const root = createRoot(body);
const ref = createRef<PortalReplyHandle>();
let text = "";
const draw = (streaming: boolean) =>
  root.render(<PortalReply ref={ref} text={text} streaming={streaming} onSettled={() => settled(report)} />);

const report = stream(
  (chunk) => {
    text += chunk;
    draw(true);
  },
  () => draw(false),
  () => ref.current?.drawnLength ?? 0,
);
