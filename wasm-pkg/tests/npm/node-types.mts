// The package's Node types (moduleResolution nodenext, as a Node project in TypeScript): the
// "node" condition's declarations for `import`.
import { Playout, TranscriptError, validateTranscript } from "portal-wasm";
import { Playout as PlayoutAlone, PlayoutOptionsError } from "portal-wasm/playout";

try {
  const transcript = validateTranscript('{"version":1,"turns":[]}');
  const playout = new Playout();
  playout.push(`${transcript.turns.length} turns`, 0);
  playout.finish(0);
  new PlayoutAlone({ lagMs: 0 }).tick(0).newText.toUpperCase();
} catch (error) {
  if (error instanceof TranscriptError) console.log(error.invariant);
  if (error instanceof PlayoutOptionsError) console.log(error.option);
}
