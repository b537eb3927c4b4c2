// Versions of one answer (issue 32): Regenerate and an edited latest message show their answers
// as versions of one turn, ‹ 1/2 › under the answer, one version at a time, the same after a
// reload; the transcript keeps every turn as it was sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, scanBoth, sendAndWait, shots, conversationInUrl } from './portal.mjs';

const shownTurns = (page) => page.evaluate(() =>
  [...document.querySelectorAll('.turn')].filter((t) => !t.hidden).map((t) => Number(t.dataset.turn)));

test('Regenerate and an edited latest message are versions of one turn', { timeout: 180000 }, async () => {
  const { page, close, portal } = await openPortal(['--demo-pace', '0'], { viewport: { width: 1000, height: 900 } });
  try {
    await sendAndWait(page, 'Tell me about the herons');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    await page.locator('[data-turn="1"] [data-testid="regenerate"]').click();
    await page.locator('[data-turn="2"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    await page.locator('[data-turn="2"][data-settled="true"]').waitFor();
    assert.deepEqual(await shownTurns(page), [2], 'the newest version shows in the first one\'s place');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="version"]').innerText(), '2/2');
    await page.screenshot({ path: join(shots, 'versions-2-of-2.png') });

    // The version before, by keyboard: the focus stays on the switch.
    await page.locator('[data-turn="2"] [data-testid="version-before"]').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-turn="1"]:not([hidden]) [data-testid="version"]').waitFor();
    assert.deepEqual(await shownTurns(page), [1]);
    assert.equal(await page.locator('[data-turn="1"] [data-testid="version"]').innerText(), '1/2');
    await page.waitForFunction(() => document.activeElement?.closest('[data-turn="1"] .versions'));
    assert.ok(await page.locator('[data-turn="1"] [data-testid="version-before"]').isDisabled(), 'no version before the first');
    const found = await scanBoth(page, 'versions');
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));

    // Edit the latest message: sent, the edit is a third version, shown at once.
    await page.locator('[data-turn="1"] [data-testid="version-after"]').click();
    await page.locator('[data-turn="2"] [data-testid="edit"]').click();
    await page.getByLabel('Message').fill('Tell me about the herons of the lake');
    await page.keyboard.press('Enter');
    await page.locator('[data-turn="3"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    assert.deepEqual(await shownTurns(page), [3]);
    assert.equal(await page.locator('[data-turn="3"] [data-testid="version"]').innerText(), '3/3');

    // A new message is a turn of its own.
    await sendAndWait(page, 'And the storks?');
    assert.deepEqual(await shownTurns(page), [3, 4]);
    assert.equal(await page.locator('[data-turn="4"] [data-testid="version"]').count(), 0);

    await page.reload();
    await page.locator('[data-turn="4"][data-settled="true"]').waitFor();
    assert.deepEqual(await shownTurns(page), [3, 4], 'the same after a reload');
    assert.equal(await page.locator('[data-turn="3"] [data-testid="version"]').innerText(), '3/3');

    // The transcript keeps every turn as sent, each version naming the turn it answers again.
    const id = conversationInUrl(page);
    const transcript = await (await fetch(`${portal.url}/api/conversations/${id}`)).json();
    assert.deepEqual(transcript.turns.map((t) => (t.trace ?? []).find((e) => e.kind === 'ANSWERS_AGAIN')?.turn ?? null),
      [null, 1, 2, null]);
  } finally {
    await close();
  }
});
