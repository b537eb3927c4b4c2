import type { DiagramOptions, ReplyView, ReplyViewOptions } from "../full/web.js";

/** The `ReplyView` class of either full entry (`portal-wasm` or `portal-wasm/web`). */
export interface ReplyViewClass {
  new (element: HTMLElement, options?: ReplyViewOptions): ReplyView;
  drawReply(element: HTMLElement, text: string, options?: ReplyViewOptions): void;
}

/**
 * `<portal-reply>`: an element that draws a reply as it streams in, with `ReplyView`'s methods.
 * Attribute `reduced-motion="true"` (or `"false"`) sets ReplyView's `reducedMotion` option; by
 * default it follows `prefers-reduced-motion`. Properties `highlightCode` and `diagrams` set the
 * options of the same names. Options are read when a reply starts (its first `push`, or
 * `drawReply`). Style it with `portal-wasm/reply.css`.
 */
export interface PortalReplyElement extends HTMLElement {
  /** The element's ReplyView, made on first use. */
  readonly view: ReplyView;
  /**
   * Called with the element once its reply settled, to colour its code: `highlightCode` from
   * `portal-wasm/highlight`, or your own (ReplyView's `highlightCode` option).
   */
  highlightCode: ((element: HTMLElement) => void) | null;
  /** Fenced code blocks drawn as diagrams by your page (ReplyView's `diagrams` option). */
  diagrams: DiagramOptions | null;
  /** Text of the reply as it streams in; chunks may end anywhere, even inside a character. */
  push(text: string): void;
  /** The stream ended: the rest plays out, then the reply settles. */
  finish(): void;
  /** Stops the reply where it is: nothing more is drawn and `settled` never resolves. */
  cancel(): void;
  /** Resolves with the whole reply once it settled (never after `cancel`). */
  readonly settled: Promise<string>;
  /** How much of the reply is drawn, in UTF-16 code units. */
  readonly drawnLength: number;
  /** Draws a whole reply at once, settled (a reloaded conversation), in place of anything drawn. */
  drawReply(text: string): void;
  /** Starts a new reply in place of this one (cancelled, then cleared). */
  reset(): void;
}

/**
 * Defines `<portal-reply>` (or `name`) with the `ReplyView` of the entry the page loaded, so the
 * page holds one engine; returns the element's class. Nothing is defined on import. Initialise
 * the engine first (`await init()` from `portal-wasm/web`).
 *
 * ```ts
 * import init, { ReplyView } from "portal-wasm/web";
 * import { definePortalReply } from "portal-wasm/element";
 * import "portal-wasm/reply.css";
 * await init();
 * definePortalReply(ReplyView);
 * const reply = document.createElement("portal-reply");
 * ```
 */
export declare function definePortalReply(
  ReplyView: ReplyViewClass,
  name?: string,
): { new (): PortalReplyElement; prototype: PortalReplyElement };

declare global {
  interface HTMLElementTagNameMap {
    "portal-reply": PortalReplyElement;
  }
}
