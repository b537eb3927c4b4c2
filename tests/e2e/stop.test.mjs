// Stop follows the playout, not the stream (issue 48): once the stream has ended, the reply's last
// words may still be playing out, and Stop stays until the reply has settled on screen. Pressed
// then (or Esc), it ends the playout: the reply is drawn whole at once, as a reload draws it, and
// nothing is sent to the server, whose turn has already ended. The page's animation frames are
// held so that the playout stands still where the test looks at it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameHolder, openPortal, scanBoth, shootWidths } from './portal.mjs';

const MESSAGE = 'Tell me about writing systems';

/** Sends `text` as turn `turn`, and holds the frames once some of its answer is drawn and the
 * stream has ended: the reply is ended but not settled. */
async function endedUnsettled(page, frames, turn, text = MESSAGE) {
  await page.getByLabel('Message').fill(text);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => (document.querySelector(`[data-turn="${n}"] .block.answer.live`)?.textContent.length ?? 0) > 40,
    turn, { timeout: 60000 });
  await frames.hold();
  await page.locator(`[data-turn="${turn}"][data-turn-status="completed"]`).waitFor({ timeout: 60000 });
  assert.equal(await page.locator(`[data-turn="${turn}"]`).getAttribute('data-settled'), 'false', 'the playout goes on');
}

/** What a settled reply of turn `turn` leaves of a live one: words resolving, the caret. */
const leftovers = (page, turn) => page.evaluate((n) =>
  document.querySelectorAll(`[data-turn="${n}"] :is(.w, .caret, .block.live)`).length, turn);

test('Stop stays while the reply plays out, and then shows it whole at once', { timeout: 240000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.3'], { viewport: { width: 1280, height: 900 } });
  try {
    const cancels = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/cancel')) cancels.push(request.url());
    });
    const frames = await frameHolder(page);

    // The stream has ended; the playout has not: Stop is there until the reply settles.
    await endedUnsettled(page, frames, 1);
    const stop = page.locator('[data-turn="1"] [data-testid="cancel"]');
    assert.equal(await stop.isVisible(), true, 'Stop stays while the reply plays out');
    assert.equal(await page.locator('[data-turn="1"] [data-testid="copy"]').count(), 0, 'no Copy before the reply settles');
    await shootWidths(page, 'stop-playing-out');
    const found = await scanBoth(page, 'playing out after the stream ended', { settled: false });
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));
    await frames.release();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    assert.equal(await stop.count(), 0, 'Stop goes once the reply has settled');
    const whole = await page.locator('[data-turn="1"] .message.assistant').innerText();

    // Stop while the playout stands still: the reply is drawn whole at once, and the turn stays
    // completed (nothing to cancel on the server).
    await endedUnsettled(page, frames, 2);
    await page.locator('[data-turn="2"] [data-testid="cancel"]').click();
    await page.locator('[data-turn="2"][data-settled="true"]').waitFor({ timeout: 2000 });
    assert.equal(await leftovers(page, 2), 0, 'drawn as a settled reply');
    assert.equal(await page.locator('[data-turn="2"] .message.assistant').innerText(), whole, 'the whole reply, at once');
    assert.equal(await page.locator('[data-turn="2"]').getAttribute('data-turn-status'), 'completed');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="cancel"]').count(), 0);
    await page.locator('[data-turn="2"] [data-testid="copy"]').waitFor();
    // The frames go on again for the code's colours, which are painted on one.
    await frames.release();
    await shootWidths(page, 'stop-settled');

    // Esc does what Stop does.
    await endedUnsettled(page, frames, 3);
    await page.keyboard.press('Escape');
    await page.locator('[data-turn="3"][data-settled="true"]').waitFor({ timeout: 2000 });
    assert.equal(await leftovers(page, 3), 0);
    assert.equal(await page.locator('[data-turn="3"] .message.assistant').innerText(), whole);
    await frames.release();

    assert.deepEqual(cancels, [], 'an ended turn is not cancelled again');
    assert.equal(await page.locator('.problem').count(), 0, 'no problem was shown');
  } finally {
    await close();
  }
});
