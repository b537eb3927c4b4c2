// A message sent in the browser gets the demo model's reply played out; once settled it is plain
// text, identical to the same reply reloaded (R3, R7, R8, R10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const answer = '.turn .block.answer .body';

test('r7_r8_r10 a sent message plays out, settles to plain text and reloads identically', async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.5']);
  try {
    assert.match(await page.getByTestId('model-label').innerText(), /demo/);
    // Local mode: no sign-in page, no Sign out.
    assert.equal(await page.getByLabel('Password').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');

    // Mid-playout: words still resolving from their blur (R7) and the breathing caret (R8).
    await page.locator(`${answer} .w`).nth(8).waitFor({ timeout: 15000 });
    await page.locator(`${answer} .caret`).waitFor();
    // The open block is drawn again each frame, so each look at the page is one evaluation.
    const blur = await page.evaluate((sel) => {
      const words = document.querySelectorAll(`${sel} .w`);
      return words.length ? getComputedStyle(words[words.length - 1]).display : 'none';
    }, answer);
    assert.equal(blur, 'inline', 'word elements stay inline');
    // The newest word is still blurred and faint (R7), and the caret's ink changes as it breathes
    // (R8): the word's steps are drawn frame by frame, and the caret breathes by a compositor
    // animation at reading speed or by a breath written on each drawn frame when faster.
    const motion = [];
    for (let look = 0; look < 6; look++) {
      motion.push(await page.evaluate((sel) => {
        const words = document.querySelectorAll(`${sel} .w`);
        const caret = document.querySelector(`${sel} .caret`);
        return {
          newest: words.length ? getComputedStyle(words[words.length - 1]).filter : 'none',
          caret: caret ? getComputedStyle(caret).opacity : null,
        };
      }, answer));
      await page.waitForTimeout(120);
    }
    assert.ok(motion.some((m) => /blur\((?!0px)/.test(m.newest)), `the newest word resolves from a blur: ${JSON.stringify(motion)}`);
    assert.ok(new Set(motion.map((m) => m.caret).filter(Boolean)).size > 1, `the caret breathes: ${JSON.stringify(motion)}`);
    await page.screenshot({ path: join(shots, 'reply-mid-playout.png') });
    // R7: a word resolves as one element, even when frames reveal its letters one by one: two
    // resolving elements side by side never split a word between them. Words are UAX #29's, which
    // finds no boundaries inside scripts written without spaces (Thai, Lao, Khmer, Myanmar, Han,
    // Hiragana): there each character is a word of its own, so those are not judged.
    const splits = [];
    for (let look = 0; look < 40; look++) {
      splits.push(...await page.evaluate((sel) => {
        const found = [];
        const letter = /[\p{L}\p{M}\p{N}]$/u;
        const unspaced = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Han}\p{Script=Hiragana}]/u;
        for (const w of document.querySelectorAll(`${sel} .w`)) {
          const next = w.nextSibling;
          if (next?.nodeType === 1 && next.classList.contains('w')
            && letter.test(w.textContent) && /^[\p{L}\p{M}\p{N}]/u.test(next.textContent)
            && !unspaced.test(next.textContent.slice(0, 1))) {
            found.push(`${w.textContent}|${next.textContent}`);
          }
        }
        return found;
      }, answer));
      await page.waitForTimeout(50);
    }
    assert.deepEqual(splits, [], 'no word is split between two resolving elements (R7)');

    await page.locator('[data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 90000 });
    const settled = await page.locator(answer).innerHTML();
    assert.ok(!settled.includes('class="w"'), 'no per-word elements are left behind (R10)');
    assert.ok(!settled.includes('caret'), 'no caret is left behind (R10)');
    const reply = await page.locator(answer).innerText();
    assert.ok(reply.includes('👨‍👩‍👧‍👦'), 'the reply holds the family emoji whole');
    assert.ok(reply.includes('日本語'), 'the reply holds Japanese');
    assert.ok((await page.locator(`${answer} p`).count()) >= 5, 'one paragraph element per paragraph');
    // The demo's tour is markdown, drawn as the model meant it.
    assert.equal(await page.locator(`${answer} h2`).innerText(), 'What plays out here');
    assert.equal(await page.locator(`${answer} li strong`).first().innerText(), 'Whole clusters');
    assert.equal(await page.locator(`${answer} li code`).first().innerText(), '**bold**');
    assert.equal(await page.locator(`${answer} .code-block .code-language`).innerText(), 'rust');
    assert.match(await page.locator(`${answer} .code-block code`).innerText(), /^let frame = playout\.tick\(now_ms\);\ndraw\(&frame\);/);
    assert.equal(await page.locator(`${answer} table th`).first().innerText(), 'Script');
    const link = page.locator(`${answer} a`);
    assert.equal(await link.getAttribute('href'), 'https://commonmark.org');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer nofollow');
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.ok(!reply.includes('## ') && !reply.includes('|---') && !reply.includes('```'), 'no raw markdown syntax is shown');
    await page.screenshot({ path: join(shots, 'reply.png'), fullPage: true });

    // R10: the reloaded conversation is drawn as plain text, the same DOM as the settled one.
    await page.reload();
    await page.locator('[data-turn-status="completed"][data-settled="true"]').waitFor();
    assert.equal(await page.locator(answer).innerHTML(), settled);
    assert.equal(await page.locator(`${answer} .caret`).count(), 0);
    // The sidebar lists the conversation by its first words, as the open one.
    const listed = page.getByRole('navigation', { name: 'Conversations' }).locator('[aria-current="page"]');
    await listed.waitFor();
    assert.equal(await listed.locator('.title').innerText(), 'Tell me about writing systems');
  } finally {
    await close();
  }
});
