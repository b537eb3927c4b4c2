// The keyboard: the message box has the focus on load and after sending; the Enter that confirms
// an input method's candidate (Japanese, Chinese, Korean) does not send; Shift+Enter makes a new
// line; Esc stops a running turn; and the focus is visible on everything it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

const focused = (page) => page.evaluate(() => document.activeElement?.getAttribute('aria-label'));

test('IME Enter does not send, Shift+Enter breaks the line, Esc stops, and the focus shows', { timeout: 180000 }, async () => {
  const { browser, page, close } = await openPortal(['--demo-pace', '0.5']);
  try {
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');

    // An input method composing にほんご: its Enter confirms the candidate, as the browser reports
    // it (isComposing, or key code 229 on some input methods), and sends nothing.
    const message = page.getByLabel('Message');
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Input.imeSetComposition', { text: 'にほんご', selectionStart: 4, selectionEnd: 4 });
    await cdp.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 229, nativeVirtualKeyCode: 229 });
    await cdp.send('Input.insertText', { text: 'にほんご' });
    for (const init of [{ isComposing: true }, { keyCode: 229 }]) {
      await message.evaluate((area, init) => {
        area.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', bubbles: true, cancelable: true, ...init }));
      }, init);
    }
    await page.waitForTimeout(500);
    assert.equal(await page.locator('.turn').count(), 0, 'nothing was sent');
    assert.equal(await message.inputValue(), 'にほんご');
    await page.screenshot({ path: join(shots, 'keyboard-ime.png') });

    // Shift+Enter: a new line, not a message.
    await message.press('End');
    await message.press('Shift+Enter');
    await page.keyboard.type('の文字');
    assert.equal(await message.inputValue(), 'にほんご\nの文字');
    assert.equal(await page.locator('.turn').count(), 0);

    // Enter sends; the message box keeps the focus for the next one.
    await message.fill('Tell me about writing systems');
    await message.press('Enter');
    await status(page, 1, 'running');
    await page.locator('[data-turn="1"] .block').first().waitFor({ timeout: 30000 });
    assert.equal(await focused(page), 'Message', 'the message box has the focus after sending');

    // Esc stops the running turn.
    await page.keyboard.press('Escape');
    await status(page, 1, 'cut_off');

    // The focus is visible wherever Tab takes it.
    await message.focus();
    const seen = [];
    for (let step = 0; step < 12; step += 1) {
      await page.keyboard.press('Tab');
      seen.push(await page.evaluate(() => {
        const el = document.activeElement;
        // Past the page's last control the focus leaves the page for the browser's own.
        if (el === document.body) return { what: 'the browser', outline: true };
        const shown = el.closest('label') ?? el;
        const style = getComputedStyle(shown);
        return {
          what: `${el.tagName.toLowerCase()} ${el.getAttribute('aria-label') ?? el.textContent.trim().slice(0, 20)}`,
          outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        };
      }));
    }
    const hidden = seen.filter((s) => !s.outline);
    assert.deepEqual(hidden, [], `every focused element shows its focus: ${JSON.stringify(seen)}`);
    await page.screenshot({ path: join(shots, 'keyboard-focus.png') });
  } finally {
    await close();
  }
});
