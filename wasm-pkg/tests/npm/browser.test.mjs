// Pages bundled with esbuild from the installed package, played in headless Chromium: the React
// example shows the streamed reply one whole character at a time and settles on the reply,
// ReplyView and <portal-reply> draw a streamed markdown reply and settle to the reloaded DOM (a
// maths reply never showing a delimiter on the way, settling to MathML), and
// portal-wasm/react's <PortalReply text> plays a growing text, draws a replaced one settled and
// stops its frames when unmounted, the README's Vue 3 and Svelte 5 components draw a streamed
// reply through <portal-reply> (a ref pushed into, attributes bound) and settle to the reloaded DOM,
// and portal-wasm/highlight colours a settled reply's code, fetching nothing until a reply has
// code, while a diagram hook draws each settled diagram block once, through ReplyView, the
// element and the React component, and as the README's example does.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import test from 'node:test';

import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { compile } from 'svelte/compiler';

import { writeReadmeExample, writeReadmeSection } from './readme.mjs';

const out = 'page-dist';
const types = { '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

/**
 * `entry` bundled by esbuild into `out` (with `splitting`, dynamic imports as chunks of their
 * own, `alias`, modules stood in for, and React's and Vue's development builds when
 * `development`), served with a page that loads it, and Chromium.
 */
async function bundled(entry, { splitting = false, alias = {}, development = false } = {}) {
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    splitting,
    alias,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    minify: true,
    jsx: 'automatic',
    outdir: out,
    loader: { '.wasm': 'file' },
    define: {
      'process.env.NODE_ENV': development ? '"development"' : '"production"',
      // Vue's esm-bundler build asks the bundler for its feature flags.
      __VUE_OPTIONS_API__: 'true',
      __VUE_PROD_DEVTOOLS__: 'false',
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
    },
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
    const { page, errors } = await opened(browser, url);
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
    const { page, errors } = await opened(browser, url);
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

    // Maths streamed one grapheme cluster at a time never shows a delimiter in any frame, and
    // settles to MathML the browser draws, the same DOM a reloaded reply gets.
    const maths = await page.evaluate(() => window.portalTest.maths());
    assert.ok(maths.frames.length > 20, `drawn over many frames (${maths.frames.length})`);
    for (const text of maths.frames) {
      assert.doesNotMatch(text, /\$|\\[()[\]]/, `a maths delimiter drawn: ${text}`);
    }
    assert.equal(maths.live, maths.reloaded, 'the maths reply settles to the DOM drawReply draws');
    assert.equal(maths.code, 0, 'every span is drawn as maths, none as its TeX');
    assert.deepEqual(maths.maths.map(({ namespace, display }) => [namespace, display]), [
      ['http://www.w3.org/1998/Math/MathML', 'math'],
      ['http://www.w3.org/1998/Math/MathML', 'math'],
      ['http://www.w3.org/1998/Math/MathML', 'block math'],
      ['http://www.w3.org/1998/Math/MathML', 'block math'],
      ['http://www.w3.org/1998/Math/MathML', 'math'],
    ]);
    assert.ok(maths.maths.every(({ width }) => width > 0), 'the browser lays every formula out');

    assert.deepEqual(await page.evaluate(() => window.portalTest.refused()),
      { name: 'InputError', field: 'options.reducedMotoin' });
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, 'reply-page.png'), fullPage: true });
  } finally {
    await browser.close();
    close();
  }
});

/**
 * portal-wasm/react's page, bundled with React's production build or its development build, in
 * which StrictMode mounts every component, unmounts it and mounts it again.
 */
async function reactChecks({ development }) {
  writeReadmeExample();
  const { url, browser, close } = await bundled('react-page.tsx', { development });
  try {
    const { page, errors } = await opened(browser, url, { consoleErrors: true });
    await page.waitForFunction(() => window.portalReactTest);
    const { REPLY, OTHER } = await page.evaluate(() => window.portalReactTest);

    const streamed = await page.evaluate(() => window.portalReactTest.streamed());
    assert.equal(streamed.text, REPLY, 'onSettled gets the whole reply');
    assert.equal(streamed.early, null, 'not settled while streaming');
    assert.equal(streamed.live, streamed.reloaded, 'settles to the DOM drawReply draws');
    assert.deepEqual(streamed.headings, ['The plan 👨‍👩‍👧‍👦'], 'the heading drawn as an element');
    assert.deepEqual(streamed.items, ['trains 👩🏽‍💻', 'the Thai restaurant (น้ำ)'], 'the list drawn as elements');
    assert.equal(streamed.drawnLength, REPLY.length);
    assert.deepEqual(streamed.className.split(' ').sort(), ['chat', 'portal-reply']);
    const ends = new Set(streamed.ends);
    for (const length of streamed.drawn) assert.ok(ends.has(length), `whole characters drawn: ${length}`);
    assert.ok(new Set(streamed.drawn).size > 3, 'drawn over many updates, not at once');
    assert.ok(streamed.drawn.at(-1) < REPLY.length, 'still playing when the stream ended');

    const replaced = await page.evaluate(() => window.portalReactTest.replaced());
    assert.equal(replaced.atOnce, replaced.reloaded, 'a text that is not an extension is drawn settled at once');
    assert.equal(replaced.later, replaced.reloaded, 'and stays so');
    assert.match(replaced.atOnce, /<h1>Another reply<\/h1>/);

    const reloaded = await page.evaluate(() => window.portalReactTest.reloaded());
    assert.equal(reloaded.html, reloaded.reloaded, 'a first render not streaming is drawn settled');
    assert.equal(reloaded.settled, REPLY, 'and reported settled');

    const unmounted = await page.evaluate(() => window.portalReactTest.unmounted());
    assert.ok(unmounted.whilePlaying > 0, 'frames were asked for while playing');
    assert.equal(unmounted.afterUnmount, 0, 'no animation frame asked for after unmount');
    assert.equal(unmounted.children, 0);

    const readme = await page.evaluate(() => window.portalReactTest.readme());
    assert.equal(readme.html, readme.reloaded, "the README's example plays an AI SDK text part and settles");
    assert.ok(readme.playing, 'it was playing when the part was done');

    const pushed = await page.evaluate(() => window.portalReactTest.pushed());
    assert.equal(pushed.text, REPLY, 'the ref pushes chunks, some cut inside a surrogate pair');
    assert.equal(pushed.live, pushed.reloaded);

    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, `react-page${development ? '-development' : ''}.png`), fullPage: true });
  } finally {
    await browser.close();
    close();
  }
}

test('<PortalReply text> from portal-wasm/react (React 19) plays a growing text and settles', () =>
  reactChecks({ development: false }));

test("<PortalReply text> does the same in StrictMode under React's development build", () =>
  reactChecks({ development: true }));

/** A new page of `browser` at `url`, and the errors it throws (and logs, with `consoleErrors`). */
async function opened(browser, url, { consoleErrors = false } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error));
  if (consoleErrors) {
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  }
  await page.goto(url);
  return { page, errors };
}

/**
 * The page `entry` of a framework, whose `window[api]` plays the README's component twice: with
 * reduced-motion="true" (words never blurred) and "false" (words resolving from a blur).
 */
async function framework(entry, api) {
  const { url, browser, close } = await bundled(entry);
  try {
    const { page, errors } = await opened(browser, url, { consoleErrors: true });
    await page.waitForFunction((api) => window[api], api);
    const REPLY = await page.evaluate((api) => window[api].REPLY, api);
    for (const motion of ['reduced', 'moving']) {
      const played = await page.evaluate(([api, motion]) => window[api][motion](), [api, motion]);
      assert.equal(played.text, REPLY, `${motion}: settled resolves with the whole reply`);
      assert.equal(played.live, played.reloaded, `${motion}: settles to the DOM drawReply draws`);
      assert.deepEqual(played.headings, ['The plan 👨‍👩‍👧‍👦'], `${motion}: the heading drawn as an element`);
      assert.deepEqual(played.items, ['trains 👩🏽‍💻', 'the Thai restaurant (น้ำ)'], `${motion}: the list drawn as elements`);
      assert.ok(played.className.split(' ').includes('chat'), `${motion}: the bound class: ${played.className}`);
    }
    const reduced = await page.evaluate((api) => window[api].reduced(), api);
    assert.equal(reduced.reducedMotion, 'true');
    assert.equal(reduced.dataReducedMotion, 'true', 'the bound reduced-motion reached the view');
    assert.equal(reduced.blurred, 0, 'reduced-motion="true": no word drawn blurred');
    const moving = await page.evaluate((api) => window[api].moving(), api);
    assert.equal(moving.dataReducedMotion, 'false', 'the bound reduced-motion reached the view');
    assert.ok(moving.words > 0 && moving.blurred > 0, 'reduced-motion="false": words resolve from a blur');
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, `${entry.replace(/\.ts$/, '')}.png`), fullPage: true });
  } finally {
    await browser.close();
    close();
  }
}

test("the README's Vue 3 component draws a streamed reply through <portal-reply>", async () => {
  writeReadmeSection('In Vue', 'readme-vue.js');
  await framework('vue-page.ts', 'portalVueTest');
});

test("the README's Svelte 5 component draws a streamed reply through <portal-reply>", async () => {
  const source = writeReadmeSection('In Svelte', 'readme-svelte.svelte');
  const { js, warnings } = compile(source, { filename: 'readme-svelte.svelte', generate: 'client' });
  assert.deepEqual(warnings.map((w) => w.message), [], 'svelte/compiler has no warnings');
  writeFileSync('readme-svelte.js', js.code);
  await framework('svelte-page.ts', 'portalSvelteTest');
});

test('portal-wasm/highlight colours settled code, loaded on first need; diagrams are drawn once', async () => {
  const { url, browser, close } = await bundled('hooks-page.tsx', { splitting: true });
  try {
    const { page, errors } = await opened(browser, url, { consoleErrors: true });
    await page.waitForFunction(() => window.portalHooksTest);
    const { FLOW } = await page.evaluate(() => window.portalHooksTest);
    assert.deepEqual(await page.evaluate(() => window.portalHooksTest.prism()), [], 'nothing fetched on import');
    assert.deepEqual(await page.evaluate(() => window.portalHooksTest.plain()), [],
      'nothing fetched for a reply without code blocks');

    const view = await page.evaluate(() => window.portalHooksTest.view());
    assert.deepEqual(view.before, [], 'nothing fetched while the reply plays out');
    assert.deepEqual(view.after.map((name) => name.replace(/\.min-\w+\.js$/, '')).sort(), ['prism-core', 'prism-rust'],
      "once settled, Prism's core and the reply's one language, each a chunk of its own");
    assert.deepEqual(view.keywords.sort(), ['fn', 'let'], "CSS.highlights holds the Rust's keywords");
    assert.equal(view.codeTexts, 1, "the code's DOM is untouched: one text node");
    assert.deepEqual(view.calls, [[FLOW, 'mermaid', 'diagram']], 'the diagram hook called once, with its source');
    assert.deepEqual(view.svgs, [FLOW]);
    assert.ok(view.same, 'settled to the DOM drawReply draws with the same diagram hook');

    for (const through of ['element', 'react']) {
      const shown = await page.evaluate((through) => window.portalHooksTest[through](), through);
      assert.deepEqual(shown.calls, [[FLOW, 'mermaid', 'diagram']], `${through}: the diagram hook called once`);
      assert.deepEqual(shown.svgs, [FLOW], `${through}: the diagram drawn`);
      assert.deepEqual(shown.keywords.sort(), ['fn', 'let'], `${through}: the code coloured`);
    }
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(out, 'hooks-page.png'), fullPage: true });
  } finally {
    await browser.close();
    close();
  }
});

test("the README's diagrams example draws mermaid blocks once settled and colours code", async () => {
  writeReadmeSection('Code colours and diagrams', 'readme-diagrams.ts');
  const { url, browser, close } = await bundled('readme-diagrams-page.ts',
    { splitting: true, alias: { mermaid: './mermaid-stub.ts' } });
  try {
    const { page, errors } = await opened(browser, url, { consoleErrors: true });
    await page.waitForFunction(() => document.querySelectorAll('#reply .diagram').length === 2
      && [...(CSS.highlights.get('code-keyword') ?? [])].length > 0, null, { timeout: 20000 });
    const shown = await page.evaluate(() => ({
      svgs: [...document.querySelectorAll('#reply .diagram svg')].map((svg) => decodeURIComponent(svg.dataset.source)),
      texts: [...document.querySelectorAll('#reply .diagram')].map((diagram) => diagram.textContent),
      code: document.querySelectorAll('#reply .code-block').length,
    }));
    assert.deepEqual(shown.svgs, ['graph TD\n  A-->B\n'], 'mermaid.render drew the graph');
    assert.deepEqual(shown.texts, ['', 'not a diagram\n'], 'a block mermaid cannot draw shows its source');
    assert.equal(shown.code, 1, 'the rust block stays code');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    close();
  }
});
