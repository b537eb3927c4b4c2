// The installed package from Node as an ES module: a transcript validated, a reply played on a
// virtual clock, markdown drawn as it plays out, errors caught by class, the playout-only entry,
// and the Node example script.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  AttachmentError, InputError, Playout, PlayoutOptionsError, StreamingMarkdown, TranscriptError,
  buildPrompt, parseCommand, rebuildMemory, renderMarkdown, validateTranscript,
} from 'portal-wasm';
import * as playoutOnly from 'portal-wasm/playout';

const fixtures = join(process.env.PORTAL_ROOT ?? '../../..', 'tests', 'fixtures', 'transcripts');
const fixture = (name) => readFileSync(join(fixtures, name), 'utf8');

test('validates a transcript and names the broken invariant', () => {
  const transcript = validateTranscript(fixture('valid-parallel-calls-out-of-order.json'));
  assert.equal(transcript.version, 1);
  assert.ok(transcript.turns.length > 0);
  assert.deepEqual(parseCommand('/compact keep figures'), { kind: 'compact', instructions: 'keep figures' });
  assert.throws(() => validateTranscript(fixture('invalid-calls-answered.json')), (error) => {
    assert.ok(error instanceof TranscriptError, 'a TranscriptError');
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'TranscriptError');
    assert.equal(error.invariant, 'calls-answered');
    assert.equal(error.location.turn, 1);
    assert.match(error.stack, /TranscriptError/);
    return true;
  });
});

/** Plays `chunks` (pushed 50 ms apart) out on a virtual clock; the text of every frame. */
function play(PlayoutClass, chunks) {
  const playout = new PlayoutClass();
  const shown = [];
  let text = '';
  let now = 0;
  let next = 0;
  for (let tick = 0; tick < 10_000; tick++, now += 16) {
    while (next < chunks.length && next * 50 <= now) playout.push(chunks[next++], now);
    if (next === chunks.length) {
      playout.finish(now);
      next++;
    }
    const frame = playout.tick(now);
    text += frame.newText;
    assert.equal(frame.words.join(''), frame.newText);
    assert.equal(text, playout.visibleText());
    shown.push(text);
    if (frame.done) break;
  }
  playout.free();
  return shown;
}

test('plays a reply out on a virtual clock, whole characters only', () => {
  const reply = 'Family 👨‍👩‍👧‍👦 to 🇯🇵, café ☕ and น้ำ.';
  // Cut every four UTF-16 units: inside surrogate pairs and ZWJ sequences.
  const chunks = reply.match(/[\s\S]{1,4}/g);
  for (const PlayoutClass of [Playout, playoutOnly.Playout]) {
    const shown = play(PlayoutClass, chunks);
    assert.equal(shown.at(-1), reply);
    const clusters = new Set([0]);
    let at = 0;
    for (const { segment } of new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply)) {
      clusters.add((at += segment.length));
    }
    for (const text of shown) assert.ok(clusters.has(text.length), `a whole character: ${text}`);
    assert.equal(shown[0], '', 'nothing is due at the first frame');
    assert.ok(shown.length > chunks.length, 'revealed over more frames than chunks');
  }
});

/** Every text leaf of a markdown tree. */
function leaves(tree, found = []) {
  if (Array.isArray(tree)) tree.forEach((node) => leaves(node, found));
  else if (tree && typeof tree === 'object') {
    if (tree.kind === 'text') found.push(tree);
    Object.values(tree).forEach((value) => leaves(value, found));
  }
  return found;
}

test('markdown played out: settled blocks, UTF-16 ranges, the whole reply at the end', () => {
  const reply = '# 東京 👨‍👩‍👧‍👦\n\nSome **bold 🇯🇵** and [a link](https://example.com).\n\n- one\n- two\n';
  const whole = renderMarkdown(reply);
  assert.deepEqual(whole.map((block) => block.kind), ['heading', 'paragraph', 'list']);
  for (const leaf of leaves(whole)) assert.equal(reply.slice(leaf.source.start, leaf.source.end), leaf.text);

  // Revealed as the playout reveals it: whole characters, a few at a time.
  const markdown = new StreamingMarkdown();
  const clusters = [...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply)].map((s) => s.segment);
  let drawn = [];
  let shown = '';
  for (let at = 0; at < clusters.length; at += 3) {
    const piece = clusters.slice(at, at + 3).join('');
    shown += piece;
    const update = markdown.push(piece);
    assert.ok(update.unchanged <= drawn.length, JSON.stringify(update));
    for (const index of update.redrawn) drawn[index] = markdown.block(index);
    drawn = [...drawn.slice(0, update.unchanged), ...markdown.blocks(update.unchanged)];
    assert.ok(update.settled <= drawn.length, JSON.stringify(update));
    for (const leaf of leaves(drawn)) assert.equal(shown.slice(leaf.source.start, leaf.source.end), leaf.text);
    assert.ok(!JSON.stringify(drawn).includes('**'), 'no raw syntax is drawn');
  }
  const update = markdown.finish();
  assert.equal(update.settled, 3);
  assert.deepEqual([...drawn.slice(0, update.unchanged), ...markdown.blocks(update.unchanged)], whole);
  assert.deepEqual(markdown.blocks(), whole);
  markdown.free();

  const hostile = renderMarkdown('[x](javascript:alert(1)) <img src=x onerror=alert(2)>');
  assert.equal(hostile[0].content[0].href, null);
  assert.ok(leaves(hostile).some((leaf) => leaf.text.includes('<img')));
});

test('errors are classes to catch with instanceof', () => {
  assert.throws(() => new Playout({ lagMS: 600 }), (error) => {
    assert.ok(error instanceof PlayoutOptionsError);
    assert.equal(error.option, 'lagMS');
    return true;
  });
  assert.throws(() => new playoutOnly.Playout({ minCps: 0 }), playoutOnly.PlayoutOptionsError);
  assert.throws(() => rebuildMemory('{"version":1,"turns":[]}', { maxTurns: 'x' }), (error) => {
    assert.ok(error instanceof InputError);
    assert.equal(error.field, 'options');
    return true;
  });
  const blind = { id: 'm', provider: 'openai', contextWindow: 8000, maxOutputTokens: 1000, canReason: false, canSee: false };
  const picture = { kind: 'picture', id: 'p1', filename: 'chart.png', media_type: 'image/png', width: 10, height: 10 };
  assert.throws(
    () => buildPrompt({ transcript: { version: 1, turns: [] }, model: blind, newMessage: { text: 'Look', attachments: [picture] } }),
    (error) => error instanceof AttachmentError && error.filename === 'chart.png',
  );
  // A subclass of the engine's class works like any Error subclass.
  class MyError extends TranscriptError {}
  const mine = new MyError('mine');
  assert.ok(mine instanceof TranscriptError && mine instanceof Error);
  assert.equal(mine.message, 'mine');
});

test('the playout-only entry holds Playout and its error alone', () => {
  // Node's import of the CommonJS build adds `default` (module.exports) to the named exports.
  const names = Object.keys(playoutOnly).filter((name) => name !== 'default');
  assert.deepEqual(names.sort(), ['Playout', 'PlayoutOptionsError']);
});

test('the Node example builds a prompt from a transcript file', () => {
  const script = join('examples', 'node', 'build-prompt.mjs');
  const body = JSON.parse(execFileSync('node', [script, join('examples', 'node', 'transcript.json'), 'And in Osaka?'], { encoding: 'utf8' }));
  assert.equal(body.model, 'gpt-4.1');
  assert.equal(body.messages.at(-1).content, 'And in Osaka?');
  assert.equal(body.messages[0].role, 'system');

  const anthropic = JSON.parse(execFileSync('node', [script, join('examples', 'node', 'transcript.json'), 'And in Osaka?', '--format', 'anthropic'], { encoding: 'utf8' }));
  assert.equal(anthropic.messages.at(-1).role, 'user');

  const broken = spawnSync('node', [script, join(fixtures, 'invalid-calls-answered.json'), 'Hi'], { encoding: 'utf8' });
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, /calls-answered/);
});
