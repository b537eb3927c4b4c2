#!/usr/bin/env node
// Builds the request body of the next model call from a conversation saved as a transcript file,
// and prints it as JSON, ready to send to the provider.
//
//   node build-prompt.mjs transcript.json "Your next message" [--format openai|anthropic|neutral]
//
// The model's capabilities and the author's instructions are written below; a real host reads
// them from its model registry and agent configuration.
import { readFile } from 'node:fs/promises';
import { InputError, TranscriptError, buildPrompt, parseCommand } from 'portal-wasm';

const [file, message, flag, format = 'openai'] = process.argv.slice(2);
if (!file || message === undefined || (flag !== undefined && flag !== '--format')) {
  console.error('usage: node build-prompt.mjs TRANSCRIPT.json "MESSAGE" [--format openai|anthropic|neutral]');
  process.exit(2);
}

const model = {
  id: format === 'anthropic' ? 'claude-sonnet-4' : 'gpt-4.1',
  provider: format === 'anthropic' ? 'anthropic' : 'openai',
  contextWindow: 200_000,
  maxOutputTokens: 16_384,
  canReason: false,
  canSee: true,
};

try {
  const command = parseCommand(message);
  if (command.kind === 'compact') {
    console.error('/compact asks for a summary, not a model call with a new message');
    process.exit(2);
  }
  const built = buildPrompt({
    transcript: await readFile(file, 'utf8'),
    newMessage: { text: message },
    model,
    format,
    instructions: 'You are the travel desk of Example Tours. Answer briefly.',
  });
  for (const diagnostic of built.diagnostics) console.error('note:', JSON.stringify(diagnostic));
  console.log(JSON.stringify(built.body, null, 2));
} catch (error) {
  if (error instanceof TranscriptError) {
    const where = error.location ? ` (turn ${error.location.turn})` : '';
    console.error(`${file} is not a valid transcript${where}: ${error.message}`);
  } else if (error instanceof InputError) {
    console.error(`${error.field}: ${error.message}`);
  } else {
    throw error;
  }
  process.exit(1);
}
