// portal-wasm/react: <PortalReply text={growing} />, a React component around ReplyView, fed the
// whole reply so far as a prop (as Streamdown and the AI SDK's message parts give it). Plain ESM
// with React.createElement, so it needs no build step. `createPortalReply(ReplyView)` makes the
// component with the ReplyView of whichever entry the page loaded (`portal-wasm` or
// `portal-wasm/web`), so the page holds one engine.
import { createElement, forwardRef, useEffect, useImperativeHandle, useLayoutEffect, useRef } from "react";

// Drawing before the browser paints keeps a reloaded reply from flashing empty; on a server
// there is nothing to draw, and useLayoutEffect would warn there (React 18).
const useDrawEffect = typeof document === "undefined" ? useEffect : useLayoutEffect;

/**
 * Makes the `PortalReply` component drawing with `ReplyView` (the class from `portal-wasm` or
 * `portal-wasm/web`; initialise the engine before the first render).
 */
export function createPortalReply(ReplyView) {
  // What the component drew: the text so far, the live view (made on the first text), whether
  // more may come (`live`), whether the person stopped it, and the last text reported settled.
  const fresh = () => ({ view: null, text: "", live: true, started: false, stopped: false, reported: null });

  function PortalReply({ text, streaming = true, reducedMotion, highlightCode, diagrams, className, onSettled }, ref) {
    const host = useRef(null);
    const state = useRef(null);
    if (state.current === null) state.current = fresh();
    // The latest callback and options, for the views and the ref's methods.
    const props = useRef(null);
    useDrawEffect(() => {
      props.current = { onSettled, options: { reducedMotion, highlightCode, diagrams } };
    });

    const settled = (s, reply) => {
      if (s.reported === reply) return;
      s.reported = reply;
      props.current.onSettled?.(reply);
    };
    const drop = (s) => {
      s.view?.cancel();
      s.view?.free();
      s.view = null;
    };
    const push = (s, chunk) => {
      s.started = true;
      if (s.view === null) {
        const view = (s.view = new ReplyView(host.current, props.current.options));
        view.settled.then((reply) => {
          if (s.view === view) settled(s, reply);
        });
      }
      if (chunk) s.view.push(chunk);
      s.text += chunk;
    };
    const finish = (s) => {
      s.live = false;
      if (s.view) s.view.finish();
      else draw(s, s.text, true);
    };
    const draw = (s, reply, done) => {
      drop(s);
      ReplyView.drawReply(host.current, reply, props.current.options);
      Object.assign(s, { text: reply, live: false, started: true, stopped: false });
      if (done) settled(s, reply);
    };

    useDrawEffect(() => {
      const s = state.current;
      if (typeof text !== "string") return; // driven through the ref
      const grows = text.startsWith(s.text);
      if (s.stopped && grows) return; // stopped: nothing more is drawn until a new reply
      if (s.live && grows && (streaming || s.view)) {
        if (text !== s.text) push(s, text.slice(s.text.length));
        if (!streaming) finish(s);
      } else if (streaming && text === "") {
        // A new reply in the same place: empty, played out as it grows.
        drop(s);
        host.current.replaceChildren();
        state.current = fresh();
      } else if (text !== s.text || !s.started) {
        draw(s, text, !streaming);
      } else if (!streaming && s.view === null) {
        settled(s, text); // a view still playing out reports when it settles
      }
    }, [text, streaming]);

    useDrawEffect(
      () => () => {
        drop(state.current);
        state.current = fresh();
      },
      [],
    );

    useImperativeHandle(
      ref,
      () => ({
        push: (chunk) => push(state.current, chunk),
        finish: () => finish(state.current),
        cancel() {
          const s = state.current;
          s.view?.cancel();
          s.live = false;
          s.stopped = true;
        },
        get drawnLength() {
          const s = state.current;
          return s.view ? s.view.drawnLength : s.live ? 0 : s.text.length;
        },
      }),
      [],
    );

    return createElement("div", { ref: host, className: className ? `portal-reply ${className}` : "portal-reply" });
  }

  PortalReply.displayName = "PortalReply";
  return forwardRef(PortalReply);
}
