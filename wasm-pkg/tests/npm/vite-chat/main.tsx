// A chat page as a front-end team writes it with Vite, React 19 and the AI SDK: `useChat` posts to
// /api/chat and the assistant's text parts are drawn by <PortalReply> in place of <Streamdown>.
// The engine comes from `portal-wasm/web` with an explicit init and the wasm's URL from Vite's
// `?url`, so Vite needs no wasm plugin (docs/decisions.md, "wasm-pkg").
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { useChat } from "@ai-sdk/react";
import init, { ReplyView } from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm?url";
import { createPortalReply } from "portal-wasm/react";
import "portal-wasm/reply.css";

await init({ module_or_path: wasmUrl });
const PortalReply = createPortalReply(ReplyView);
// For the check, which compares the settled reply with the DOM `drawReply` draws for its text.
Object.assign(window, { portalReplyView: ReplyView });

function Chat() {
  const { messages, sendMessage, status } = useChat();
  const [input, setInput] = useState("");
  return (
    <main data-status={status}>
      {messages.map((message) => (
        <article key={message.id} className={message.role}>
          {message.parts.map((part, i) =>
            part.type !== "text" ? null : message.role === "assistant" ? (
              <PortalReply key={i} text={part.text} streaming={status === "streaming"} />
            ) : (
              <p key={i}>{part.text}</p>
            ),
          )}
        </article>
      ))}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          sendMessage({ text: input });
          setInput("");
        }}
      >
        <input value={input} onChange={(event) => setInput(event.target.value)} placeholder="Ask" />
        <button type="submit" disabled={status !== "ready"}>
          Send
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<Chat />);
