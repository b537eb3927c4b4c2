// Under prefers-reduced-motion the reply still plays out in order, without blur or breathing, and
// a screen reader hears it once, when it settles (R14).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const answer = '.turn .block.answer .body';

test('r14 reduced motion: no blur or breathing, text in order, one announcement when settled', async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.5'], { reducedMotion: 'reduce' });
  try {
    // Every change of the live region's text, recorded from the start, so that an announcement fed
    // piece by piece would show up as many changes.
    await page.evaluate(() => {
      window.announcements = [];
      new MutationObserver(() => {
        for (const region of document.querySelectorAll('.announce')) {
          const text = region.textContent;
          if (text && window.announcements.at(-1) !== text) window.announcements.push(text);
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');

    // Mid-playout the caret is there and text is drawn, but nothing moves: words are drawn
    // resolved at once (no blurred pieces at all) and the caret stands still.
    await page.locator(`${answer} .caret`).waitFor({ timeout: 15000 });
    await page.waitForFunction((selector) => document.querySelector(selector)?.innerText.trim().length > 20, answer);
    const motion = await page.evaluate((selector) => {
      const style = (el) => getComputedStyle(el);
      const words = [...document.querySelectorAll(`${selector} .w`)];
      const caret = document.querySelector(`${selector} .caret`);
      return {
        wordAnimations: words.map((w) => style(w).animationName),
        wordFilters: words.map((w) => style(w).filter),
        caretAnimation: caret ? style(caret).animationName : 'missing',
        caretStyle: caret ? caret.getAttribute('style') : 'missing',
        shown: document.querySelector(selector).innerText,
        announced: [...document.querySelectorAll('.announce')].map((r) => r.textContent).join(''),
      };
    }, answer);
    assert.ok(motion.wordAnimations.every((name) => name === 'none'), `no blur animation: ${motion.wordAnimations}`);
    assert.ok(motion.wordFilters.every((filter) => filter === 'none'), `no blur filter: ${motion.wordFilters}`);
    assert.equal(motion.wordFilters.length, 0, `no blurred pieces: ${motion.wordFilters.length}`);
    assert.equal(motion.caretAnimation, 'none', 'the caret does not breathe');
    assert.equal(motion.caretStyle, null, 'no breath is written on the caret');
    assert.equal(motion.announced, '', 'nothing is announced while the reply streams');
    await page.screenshot({ path: join(shots, 'reply-reduced-motion.png') });

    await page.locator('[data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 90000 });
    // The block that was playing out may have become narration once a tool call followed it.
    // Both sides are read as drawn (innerText) with runs of white space made one, because a
    // paragraph break is a line break in innerText and nothing in textContent.
    const flat = (text) => text.replace(/\s+/g, ' ').trim();
    const texts = await page.locator('.turn .block.text .body').evaluateAll((blocks) => blocks.map((b) => b.innerText));
    const shown = flat(motion.shown);
    assert.ok(texts.some((text) => flat(text).startsWith(shown)), `text played out in order: "${shown}" begins a block of ${JSON.stringify(texts)}`);
    const reply = await page.locator('.turn .block.text.answer .body').innerText();
    const announcements = await page.evaluate(() => window.announcements);
    assert.equal(announcements.length, 1, `the reply is announced once: ${JSON.stringify(announcements)}`);
    assert.equal(announcements[0].replace(/\s+/g, ' ').trim(), reply.replace(/\s+/g, ' ').trim());
  } finally {
    await close();
  }
});
