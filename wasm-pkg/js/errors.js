// The errors Portal's engine throws: real subclasses of Error, so `instanceof` recognises them
// and they carry a stack. The engine creates them by calling the class without `new` (the only
// way wasm-bindgen calls an imported function), which is why they are written as functions
// rather than with `class`; `new` works on them too, and `class X extends TranscriptError`.
// wasm-bindgen copies this file into the package and re-exports the four classes.

/** A subclass of Error named `name`, callable with or without `new`. */
function errorClass(name) {
  function PortalError(message) {
    return Reflect.construct(Error, [message], new.target ?? PortalError);
  }
  Object.defineProperty(PortalError, "name", { value: name });
  Object.setPrototypeOf(PortalError, Error);
  PortalError.prototype = Object.create(Error.prototype, {
    constructor: { value: PortalError, writable: true, configurable: true },
    name: { value: name, writable: true, configurable: true },
  });
  return PortalError;
}

export const TranscriptError = errorClass("TranscriptError");
export const InputError = errorClass("InputError");
export const AttachmentError = errorClass("AttachmentError");
export const PlayoutOptionsError = errorClass("PlayoutOptionsError");
