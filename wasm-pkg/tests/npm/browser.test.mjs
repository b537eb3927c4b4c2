// Pages bundled with esbuild from the installed package, played in headless Chromium: the React
// example shows the streamed reply one whole character at a time and settles on the reply, and
// ReplyView and <portal-reply> draw a streamed markdown reply and settle to the reloaded DOM.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import test from 'node:test';

import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';

const out = 'page-dist';
const types = { '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

/** `entry` bundled by esbuild into `out`, served with a page that loads it, and Chromium. */
async function bundled(entry) {
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    minify: true,
    jsx: 'automatic',
    outdir: out,
    loader: { '.wasm': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const name = entry.replace(/\.tsx?$/, '');
  const css = existsSync(join(out, `${name}.css`)) ? `<link rel="stylesheet" href="${name}.css">` : '';
  const html = `<!DOCTYPE html><meta charset="utf-8"><link rel="icon" href="data:,">${css}<div id="root"></div><script type="module" src="${name}.js"></script>`;
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
  return { url: `http://127.0.0.1:${server.address().port}/`, browser, close: () => server.close() };
}

test('an esbuild bundle plays a reply in Chromium', async () => {
  const { url, browser, close } = await bundled('page.tsx');
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(url);
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
    close();
  }
  const files = readdirSync(out).filter((f) => f.endsWith('.js') || f.endsWith('.wasm'));
  console.log(`# the React page's bundle: ${files.join(', ')}`);
});

test('ReplyView and <portal-reply> draw a streamed reply and settle to the reloaded DOM', async () => {
  const { url, browser, close } = await bundled('reply-page.ts');
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto(url);
    await page.waitForFunction(() => window.portalTest);
    const reply = await page.evaluate(() => window.portalTest.REPLY);

    const played = await page.evaluate(() => window.portalTest.played());
    assert.equal(played.settled, reply, 'settled resolves with the whole reply');
    assert.equal(played.live, played.reloaded, 'a played reply settles to the DOM drawReply draws');
    assert.equal(played.drawnLength, reply.length);
    assert.match(played.className, /\bportal-reply\b/);
    assert.doesNotMatch(played.live, /class="[^"]*\bw\b|caret/, 'no word elements or caret once settled');

    const cancelled = await page.evaluate(() => window.portalTest.cancelled());
    assert.equal(cancelled.settled, false, 'a cancelled reply never settles');
    assert.equal(cancelled.reduced, 'true');
    assert.ok(reply.replace(/\s+/g, '').length > cancelled.text.replace(/\s+/g, '').length, 'cancelled before the end');

    const element = await page.evaluate(() => window.portalTest.element());
    assert.equal(element.settled, reply);
    assert.equal(element.live, element.reloaded, '<portal-reply> settles to the DOM its drawReply draws');
    assert.equal(element.display, 'block', 'reply.css styles <portal-reply>');

    assert.deepEqual(await page.evaluate(() => window.portalTest.refused()),
      { name: 'InputError', field: 'options.reducedMotoin' });
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, 'reply-page.png'), fullPage: true });
  } finally {
    await browser.close();
    close();
  }
});
