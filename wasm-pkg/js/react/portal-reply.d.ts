import type { ForwardRefExoticComponent, RefAttributes } from "react";
import type { ReplyView, ReplyViewOptions } from "../full/web.js";

/** The `ReplyView` class of either full entry (`portal-wasm` or `portal-wasm/web`). */
export interface ReplyViewClass {
  new (element: HTMLElement, options?: ReplyViewOptions): ReplyView;
  drawReply(element: HTMLElement, text: string, options?: ReplyViewOptions): void;
}

/** The props of `<PortalReply>`. */
export interface PortalReplyProps {
  /**
   * The whole reply so far (Streamdown's `children`, an AI SDK message part's `text`). Each text
   * that extends the last plays out what it adds; a text that does not (another reply) is drawn
   * settled at once, as is any text after the reply finished or when the first render is not
   * streaming (a reloaded conversation). `""` while streaming starts a new reply. Leave it out to
   * drive the reply through the ref instead.
   */
  text?: string;
  /**
   * More text may come (default `true`): Streamdown's `isAnimating`, or an AI SDK part's
   * `state === "streaming"`. When it turns `false` the rest plays out, then the reply settles.
   */
  streaming?: boolean;
  /**
   * `true`: words appear without their blur and the caret is still; `false`: motion whatever the
   * system asks. Without it the reply follows `prefers-reduced-motion`. Read when a view starts.
   */
  reducedMotion?: boolean;
  /**
   * Called with the reply's `<div>` once it settled, to colour its code: `highlightCode` from
   * `portal-wasm/highlight`, or your own (ReplyView's option). Read when a reply starts.
   */
  highlightCode?: ReplyViewOptions["highlightCode"];
  /** Fenced code blocks drawn as diagrams by your page (ReplyView's option). Read when a reply starts. */
  diagrams?: ReplyViewOptions["diagrams"];
  /** Classes for the reply's `<div>`, besides `portal-reply`, which `portal-wasm/reply.css` styles. */
  className?: string;
  /** Called with the whole reply once it is drawn settled and no more is coming. */
  onSettled?: (text: string) => void;
}

/** What the component's ref holds: `ReplyView`'s methods, for teams who push chunks themselves. */
export interface PortalReplyHandle {
  /**
   * Text of the reply as it streams in (for a `<PortalReply>` without `text`); chunks may end
   * anywhere, even inside a character.
   */
  push(chunk: string): void;
  /** The stream ended: the rest plays out, then the reply settles (for one without `text`). */
  finish(): void;
  /**
   * Stops the reply where it is (the person pressed Stop): nothing more is drawn, `onSettled` is
   * not called, and `text` that extends the reply is ignored until a text that does not.
   */
  cancel(): void;
  /** How much of the reply is drawn, in UTF-16 code units. */
  readonly drawnLength: number;
}

/**
 * Makes `<PortalReply>` with the `ReplyView` of the entry the page loaded, so the page holds one
 * engine. Initialise the engine (`await init()` from `portal-wasm/web`) before its first render.
 * The reply is drawn into a `<div>` on the view's own animation frames, so React renders nothing
 * per frame; unmounting cancels and frees the view. Style it with `portal-wasm/reply.css`.
 *
 * ```tsx
 * import init, { ReplyView } from "portal-wasm/web";
 * import { createPortalReply } from "portal-wasm/react";
 * import "portal-wasm/reply.css";
 * await init();
 * const PortalReply = createPortalReply(ReplyView);
 * <PortalReply text={part.text} streaming={part.state === "streaming"} />;
 * ```
 */
export declare function createPortalReply(
  ReplyView: ReplyViewClass,
): ForwardRefExoticComponent<PortalReplyProps & RefAttributes<PortalReplyHandle>>;
