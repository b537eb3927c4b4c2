// portal-wasm/element: <portal-reply>, a custom element around ReplyView. Nothing is registered
// on import: `definePortalReply(ReplyView)` defines it, with the ReplyView of whichever entry the
// page loaded (`portal-wasm` or `portal-wasm/web`), so the page holds one engine.

/**
 * Defines `<portal-reply>` (or `name`) as an element drawing a reply with `ReplyView`; returns
 * its class. Defining it again under the same name returns the class already defined.
 */
export function definePortalReply(ReplyView, name = "portal-reply") {
  const defined = customElements.get(name);
  if (defined) return defined;

  class PortalReply extends HTMLElement {
    #view = null;
    #highlightCode = null;
    #diagrams = null;

    /** The element's ReplyView, made on first use with the options below. */
    get view() {
      if (this.#view === null) this.#view = new ReplyView(this, this.#options());
      return this.#view;
    }

    /** ReplyView's options: `reduced-motion="true|false"`, `highlightCode` and `diagrams`. */
    #options() {
      const reduced = this.getAttribute("reduced-motion");
      return {
        reducedMotion: reduced === "true" || reduced === "false" ? reduced === "true" : undefined,
        highlightCode: this.highlightCode,
        diagrams: this.diagrams,
      };
    }

    /** Colours the reply's code once it settled (ReplyView's option); read when a reply starts. */
    get highlightCode() {
      return this.#highlightCode;
    }
    set highlightCode(value) {
      this.#highlightCode = value;
    }

    /** Code blocks drawn as diagrams (ReplyView's option); read when a reply starts. */
    get diagrams() {
      return this.#diagrams;
    }
    set diagrams(value) {
      this.#diagrams = value;
    }

    /** Text of the reply as it streams in; chunks may end anywhere, even inside a character. */
    push(text) {
      this.view.push(text);
    }

    /** The stream ended: the rest plays out, then the reply settles. */
    finish() {
      this.view.finish();
    }

    /** Stops the reply where it is: nothing more is drawn and `settled` never resolves. */
    cancel() {
      this.#view?.cancel();
    }

    /** Resolves with the whole reply once it settled (never after `cancel`). */
    get settled() {
      return this.view.settled;
    }

    /** How much of the reply is drawn, in UTF-16 code units. */
    get drawnLength() {
      return this.#view?.drawnLength ?? 0;
    }

    /**
     * Draws a whole reply at once, settled (a reloaded conversation), in place of anything drawn;
     * a reply that was playing is cancelled. The next `push` starts a new reply.
     */
    drawReply(text) {
      this.#view?.cancel();
      this.#view?.free();
      this.#view = null;
      ReplyView.drawReply(this, text, this.#options());
    }

    /**
     * Starts a new reply in place of this one (cancelled, then cleared); the next `push` is its
     * first text.
     */
    reset() {
      this.#view?.cancel();
      this.#view?.free();
      this.#view = null;
      this.replaceChildren();
    }
  }

  customElements.define(name, PortalReply);
  return PortalReply;
}
