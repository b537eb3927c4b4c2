// The installed package from Node as CommonJS: require() gives the same engine as import.
const assert = require('node:assert/strict');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const test = require('node:test');

const portal = require('portal-wasm');
const playoutOnly = require('portal-wasm/playout');

const fixtures = join(process.env.PORTAL_ROOT ?? '../../..', 'tests', 'fixtures', 'transcripts');

test('require: validates a transcript and throws TranscriptError by class', () => {
  const transcript = portal.validateTranscript(readFileSync(join(fixtures, 'valid-simple-chat.json'), 'utf8'));
  assert.equal(transcript.turns[0].messages[1].role, 'assistant');
  assert.throws(
    () => portal.validateTranscript(readFileSync(join(fixtures, 'invalid-unique-call-ids.json'), 'utf8')),
    (error) => error instanceof portal.TranscriptError && error.invariant === 'unique-call-ids',
  );
});

test('require: plays a reply out on a virtual clock', () => {
  for (const { Playout } of [portal, playoutOnly]) {
    const playout = new Playout({ lagMs: 100 });
    playout.push('Hello, 👋🏽 world', 0);
    playout.finish(0);
    let now = 0;
    let frame = playout.tick(now);
    assert.equal(frame.newText, '', 'nothing before the lag');
    while (!frame.done && now < 10_000) frame = playout.tick((now += 16));
    assert.ok(frame.done);
    assert.equal(playout.visibleText(), 'Hello, 👋🏽 world');
    assert.equal(frame.visibleLength, 'Hello, 👋🏽 world'.length);
    playout.free();
  }
});

test('require: memory and a prompt from a transcript object', () => {
  const transcript = portal.validateTranscript(readFileSync(join(fixtures, 'valid-cut-off-call-never-returned.json'), 'utf8'));
  const memory = portal.rebuildMemory(transcript);
  assert.ok(memory.entries.length > 0);
  const model = { id: 'claude', provider: 'anthropic', contextWindow: 200000, maxOutputTokens: 8000, canReason: true, canSee: true };
  const built = portal.buildPrompt({ transcript, model, newMessage: { text: 'Go on' }, effort: 'low' });
  assert.equal(built.format, 'anthropic');
  assert.equal(built.body.model, 'claude');
  assert.ok(built.body.thinking.budget_tokens > 0);
});

test('require: markdown, whole and streamed', () => {
  const reply = 'Hello **world** 👋🏽';
  const markdown = new portal.StreamingMarkdown();
  markdown.push('Hello **wor');
  assert.equal(markdown.blocks()[0].content[1].kind, 'strong');
  markdown.push('ld** 👋🏽');
  assert.deepEqual(markdown.finish(), { unchanged: 0, redrawn: [], settled: 1 });
  assert.deepEqual(markdown.blocks(), portal.renderMarkdown(reply));
  const text = markdown.blocks()[0].content.at(-1);
  assert.equal(reply.slice(text.source.start, text.source.end), text.text);
  markdown.free();
});
