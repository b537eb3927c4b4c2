// A page bundled with esbuild from the installed package, played in headless Chromium: the React
// example shows the streamed reply one whole character at a time and settles on the reply.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import test from 'node:test';

import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';

const out = 'page-dist';
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };

test('an esbuild bundle plays a reply in Chromium', async () => {
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: ['page.tsx'],
    bundle: true,
    format: 'esm',
    minify: true,
    jsx: 'automatic',
    outdir: out,
    loader: { '.wasm': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const html = '<!DOCTYPE html><meta charset="utf-8"><div id="root"></div><script type="module" src="page.js"></script>';
  const server = createServer((request, response) => {
    const path = request.url === '/' ? null : join(out, request.url.slice(1));
    if (path !== null && !existsSync(path)) {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.setHeader('content-type', path ? types[extname(path)] ?? 'text/plain' : 'text/html');
    response.end(path ? readFileSync(path) : html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    // Sample what the reply shows while it streams.
    const seen = [];
    while (seen.length < 400) {
      const [state, text] = await page.evaluate(() => {
        const reply = document.querySelector('.reply');
        return [reply?.dataset.state, reply?.firstChild?.nodeType === 3 ? reply.firstChild.data : ''];
      });
      seen.push(text);
      if (state === 'done') break;
      await page.waitForTimeout(25);
    }
    const reply = await page.evaluate(() => window.portalReply);
    assert.deepEqual(errors, []);
    assert.equal(seen.at(-1), reply, 'settles on the whole reply');
    assert.equal(await page.locator('.caret').count(), 0, 'no caret once done');
    const segments = new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply);
    const whole = new Set([0, ...[...segments].map((s) => s.index + s.segment.length)]);
    for (const text of seen) assert.ok(reply.startsWith(text) && whole.has(text.length), `whole characters: ${text}`);
    assert.ok(new Set(seen).size > 10, 'revealed over many frames');
    await page.screenshot({ path: join(out, 'page.png') });
  } finally {
    await browser.close();
    server.close();
  }
  const files = readdirSync(out).filter((f) => f.endsWith('.js') || f.endsWith('.wasm'));
  console.log(`# the React page's bundle: ${files.join(', ')}`);
});
