// A Vite + React 19 app using the AI SDK's useChat (vite-chat/), built with Vite's JS API against
// the installed package and served with a streaming chat route made by the AI SDK itself
// (streamText on a mock model, piped as its UI message stream): a message typed and sent in
// Chromium gets a markdown reply, streamed in chunks that cut inside grapheme clusters, drawn by
// <PortalReply>. Every animation frame's drawn text must be a prefix of the settled reply's that
// ends on a whole character, and the reply must settle to the DOM ReplyView.drawReply draws.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import test from 'node:test';

import { chromium } from 'playwright-core';
import { build } from 'vite';
import { convertToModelMessages, simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const app = resolve('vite-chat');
const out = resolve('vite-dist');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

const QUESTION = 'Plan a week in Kyoto?';
const REPLY =
  '## The plan 👨‍👩‍👧‍👦 for Kyoto 🇯🇵\n\n' +
  'Three days in **Kyoto**, two in *Tokyo*, a cafe\u0301 stop ☕ and a Vie\u0323\u0302t pho\u031B\u0309 lunch. ' +
  'The team 🧑🏽‍💻 agreed 👍🏾, and Old Hangul \u1100\u1161\u11A8 still combines.\n\n' +
  '- trains 👩🏽‍💻 between the cities\n- the Thai restaurant (น้ำ) and नमस्ते, क्षमा\n\n' +
  '```rust\nlet family = "👨‍👩‍👧";\n```\n\n' +
  'Done: 1\uFE0F\u20E3 day left 🏳️‍🌈.\n';

/**
 * The reply in chunks of one to four code points, each ending inside a grapheme cluster (between
 * a family's people, before a skin tone or a combining mark) wherever one of those four offsets
 * is; never inside a surrogate pair, which a model's text never is. Returns the chunks and how
 * many end inside a cluster.
 */
function chunked(reply) {
  const ends = new Set([...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply)]
    .map((s) => s.index + s.segment.length));
  const points = Array.from(reply);
  const chunks = [];
  let inside = 0;
  for (let at = 0, offset = 0, n = 0; at < points.length; n++) {
    const lengths = [1, 2, 3, 4].filter((k) => at + k <= points.length);
    const cut = (k) => offset + points.slice(at, at + k).join('').length;
    const k = lengths.find((k) => !ends.has(cut(k))) ?? lengths[n % lengths.length];
    const piece = points.slice(at, at + k).join('');
    at += k;
    offset += piece.length;
    if (!ends.has(offset)) inside++;
    chunks.push(piece);
  }
  return { chunks, inside };
}

/** The built app's files, and POST /api/chat: the AI SDK's UI message stream of REPLY. */
function serve(chunks, asked) {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url, 'http://localhost');
    if (request.method === 'POST' && url.pathname === '/api/chat') {
      let body = '';
      for await (const piece of request) body += piece;
      const { messages } = JSON.parse(body);
      asked.push(messages.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join(''));
      const model = new MockLanguageModelV4({
        doStream: async () => ({
          stream: simulateReadableStream({
            initialDelayInMs: 100,
            chunkDelayInMs: 20,
            chunks: [
              { type: 'stream-start', warnings: [] },
              { type: 'text-start', id: 'reply' },
              ...chunks.map((delta) => ({ type: 'text-delta', id: 'reply', delta })),
              { type: 'text-end', id: 'reply' },
              {
                type: 'finish',
                finishReason: { unified: 'stop', raw: 'stop' },
                usage: {
                  inputTokens: { total: 8, noCache: 8, cacheRead: undefined, cacheWrite: undefined },
                  outputTokens: { total: chunks.length, text: chunks.length, reasoning: undefined },
                },
              },
            ],
          }),
        }),
      });
      const result = streamText({ model, messages: await convertToModelMessages(messages) });
      result.pipeUIMessageStreamToResponse(response);
      return;
    }
    const path = join(out, url.pathname === '/' ? 'index.html' : url.pathname.slice(1));
    if (!path.startsWith(out) || !existsSync(path)) {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.setHeader('content-type', types[extname(path)] ?? 'text/plain');
    response.end(readFileSync(path));
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

// Runs in the page before its scripts: the last .portal-reply's drawn text (white space and a
// code block's header left out), sampled in a frame loop of its own and after each of the page's
// animation-frame callbacks, so what a frame shows is seen whatever order the callbacks run in.
function sampler() {
  const samples = [];
  const seen = { frames: 0, replies: 0 };
  window.__samples = { samples, seen };
  const drawn = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest('.code-head, button')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    let text = '';
    while (walker.nextNode()) text += walker.currentNode.data;
    return text.replace(/\s+/g, '');
  };
  const sample = () => {
    const replies = document.querySelectorAll('article.assistant .portal-reply');
    seen.replies = Math.max(seen.replies, replies.length);
    if (replies.length === 0) return;
    const text = drawn(replies[replies.length - 1]);
    if (text !== samples.at(-1)) samples.push(text);
  };
  const request = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => request((time) => {
    try {
      callback(time);
    } finally {
      sample();
    }
  });
  request(function loop() {
    seen.frames++;
    sample();
    request(loop);
  });
}

test('a Vite + React 19 app with the AI SDK useChat draws the streamed reply through <PortalReply>', async () => {
  await build({
    root: app,
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: out,
      emptyOutDir: true,
      rolldownOptions: {
        // The AI SDK's React hooks say "use client", which means nothing in a client bundle.
        onwarn: (warning, warn) => warning.code === 'MODULE_LEVEL_DIRECTIVE' || warn(warning),
      },
    },
  });
  const { chunks, inside } = chunked(REPLY);
  assert.ok(inside >= 30, `chunks cut inside a character (${inside} of ${chunks.length})`);
  const asked = [];
  const server = await serve(chunks, asked);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error));
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    await page.addInitScript(sampler);
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.getByPlaceholder('Ask').fill(QUESTION);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForSelector('main[data-status="streaming"]');
    await page.waitForSelector('main[data-status="ready"]', { timeout: 30_000 });
    // The stream is over; the reply plays out about 0.6 s behind it, then settles. One that
    // never settles to the expected DOM fails the comparison below, which shows both.
    const expected = await page.evaluate((reply) => {
      const element = document.createElement('div');
      window.portalReplyView.drawReply(element, reply);
      return element.innerHTML;
    }, REPLY);
    const drawn = 'article.assistant .portal-reply';
    await page.waitForFunction(([drawn, html]) => document.querySelector(drawn)?.innerHTML === html,
      [drawn, expected], { timeout: 20_000 }).catch(() => {});
    assert.deepEqual(asked, [QUESTION], 'the route got the typed message');
    assert.equal(await page.evaluate((drawn) => document.querySelector(drawn)?.innerHTML, drawn), expected,
      'the reply settles to the DOM ReplyView.drawReply draws for the same text');

    const { samples, seen } = await page.evaluate(() => window.__samples);
    assert.equal(seen.replies, 1, 'one reply drawn, through <PortalReply>');
    const settled = samples.at(-1);
    const ends = new Set([0, ...[...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(settled)]
      .map((s) => s.index + s.segment.length)]);
    const broken = samples.filter((text) => !settled.startsWith(text) || !ends.has(text.length));
    assert.deepEqual(broken, [], 'no frame shows part of a character, or text the settled reply does not begin with');
    assert.ok(samples.length > 20, `drawn over many frames (${samples.length} texts in ${seen.frames} frames)`);
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, 'vite-chat.png'), fullPage: true });
  } finally {
    await browser.close();
    server.close();
  }
});
