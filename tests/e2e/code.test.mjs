// Code blocks coloured by their language (issue 32): only once the reply settled, never while it
// plays out; by naming ranges of the code's text, so the settled DOM stays what a reload draws
// (R10); with colours that meet AA on the code's background in both themes; and from a
// highlighter served outside the app's bundle, every language it names present.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPortal, root, scanBoth, shots } from './portal.mjs';

/** The texts of the code ranges named `code-KIND` inside `selector`'s code. */
const coloured = (page, selector, kind) => page.evaluate(([selector, kind]) => {
  const code = document.querySelector(selector);
  return [...(CSS.highlights.get(`code-${kind}`) ?? [])]
    .filter((range) => code?.contains(range.startContainer))
    .map((range) => range.toString());
}, [selector, kind]);

test('a code block is coloured once its reply settles, the same after a reload', { timeout: 120000 }, async () => {
  const { page, close, portal } = await openPortal(['--demo-pace', '0.3'], { viewport: { width: 1000, height: 900 } });
  try {
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    const code = '[data-turn="1"] .code-block code';
    // While the reply plays out, its code is drawn plain.
    await page.locator('[data-turn="1"] .block.live .code-block').waitFor({ timeout: 60000 });
    assert.deepEqual(await coloured(page, code, 'keyword'), [], 'no colour while the reply plays out');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    await page.waitForFunction((code) => [...(CSS.highlights.get('code-keyword') ?? [])]
      .some((range) => document.querySelector(code)?.contains(range.startContainer)), code);
    assert.ok((await coloured(page, code, 'keyword')).includes('let'), 'Rust\'s `let` is a keyword');
    assert.ok((await coloured(page, code, 'function')).includes('tick'), 'a called function is coloured');
    const settled = await page.locator('[data-turn="1"] .code-block').evaluate((b) => b.outerHTML);
    assert.equal(await page.locator(code).evaluate((c) => c.childNodes.length), 1, 'the code is one text node');
    for (const theme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: theme });
      await page.locator('[data-turn="1"] .code-block').screenshot({ path: join(shots, `code-coloured-${theme}.png`) });
    }
    const found = await scanBoth(page, 'coloured code');
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));

    await page.reload();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    await page.waitForFunction((code) => [...(CSS.highlights.get('code-keyword') ?? [])]
      .some((range) => document.querySelector(code)?.contains(range.startContainer)), code);
    assert.equal(await page.locator('[data-turn="1"] .code-block').evaluate((b) => b.outerHTML), settled,
      'a reloaded reply draws the same DOM (R10)');

    // Every file the highlighter may import is served.
    const paint = readFileSync(join(root, 'web', 'highlight', 'paint.js'), 'utf8');
    const files = [...paint.matchAll(/import\("\.\/(prism\/prism-[\w]+\.min\.js)"\)/g)].map((m) => m[1]);
    assert.ok(files.length >= 23, `paint.js imports Prism's core and its languages: ${files}`);
    for (const file of files) {
      const answer = await fetch(`${portal.url}/highlight/${file}`);
      assert.equal(answer.status, 200, `${file} is served`);
      assert.match(answer.headers.get('content-type') ?? '', /javascript/, `${file} is served as JavaScript`);
    }
  } finally {
    await close();
  }
});

/** WCAG's contrast ratio of two #rrggbb colours. */
function contrast(a, b) {
  const luminance = (hex) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (high + 0.05) / (low + 0.05);
}

test('every code colour meets AA on the code background in both themes', () => {
  const style = readFileSync(join(root, 'web', 'style.css'), 'utf8');
  const surface = style.match(/--surface: light-dark\((#\w{6}), (#\w{6})\)/);
  assert.ok(surface, 'style.css names the code background');
  const colours = [...style.matchAll(/::highlight\((code-[\w-]+)\) \{ color: light-dark\((#\w{6}), (#\w{6})\); \}/g)];
  assert.ok(colours.length >= 10, `${colours.length} code colours`);
  for (const [, name, light, dark] of colours) {
    assert.ok(contrast(light, surface[1]) >= 4.5, `${name} in the light theme: ${contrast(light, surface[1]).toFixed(2)}`);
    assert.ok(contrast(dark, surface[2]) >= 4.5, `${name} in the dark theme: ${contrast(dark, surface[2]).toFixed(2)}`);
  }
});
