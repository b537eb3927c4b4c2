// The connection told honestly (issue 32): a server killed mid-reply shows "Reconnecting…" with
// the time the stream dropped; once it is back, the turn the restarted server cut off reads
// "Interrupted" (not "Stopped") with why and Retry. A turn sent from a second tab appears in the
// first within 2 s, and its conversation list follows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots, sendAndWait, conversationInUrl, scanBoth } from './portal.mjs';

const status = (page, turn, value, timeout = 60000) => page
  .locator(`[data-turn="${turn}"][data-turn-status="${value}"]`).waitFor({ timeout });

test('a server killed mid-reply: Reconnecting with the time, then Interrupted with Retry once it is back', { timeout: 180000 }, async () => {
  let portal = await startPortal(['--demo-pace', '1']);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    await page.getByLabel('Message').fill('Tell me about scripts');
    await page.keyboard.press('Enter');
    await status(page, 1, 'running');
    await page.locator('[data-turn="1"] .block.text .body').first().waitFor();

    const { port, data, child } = portal;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const note = page.getByTestId('reconnecting');
    await note.waitFor({ timeout: 15000 });
    assert.match(await note.innerText(), /^Reconnecting… the connection dropped at \d{1,2}:\d\d:\d\d/);
    assert.equal(await page.locator('[data-turn="1"]').getAttribute('data-turn-status'), 'running');
    await page.screenshot({ path: join(shots, 'connection-reconnecting.png') });
    const found = await scanBoth(page, 'reconnecting', { settled: false });

    portal = await startPortal(['--demo-pace', '0.2'], { port, data });
    await status(page, 1, 'cut_off', 30000);
    await note.waitFor({ state: 'detached', timeout: 15000 });
    const turn = page.locator('[data-turn="1"]');
    assert.equal(await turn.getByTestId('cut-off').innerText(), 'Interrupted', 'the server cut it off, not the person');
    assert.ok((await turn.getByTestId('failure').locator('p').innerText()).length > 0, 'it says why');
    await page.screenshot({ path: join(shots, 'connection-interrupted.png') });
    found.push(...await scanBoth(page, 'interrupted'));
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));
    await turn.getByTestId('retry').click();
    await status(page, 2, 'completed');
  } finally {
    await browser?.close();
    portal.stop();
  }
});

test('a turn sent from a second tab appears in the first within 2 s, and its list follows', { timeout: 120000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0.2']);
  let browser;
  try {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const first = await context.newPage();
    await first.goto(portal.url);
    await first.getByTestId('model-label').waitFor();
    await sendAndWait(first, 'Plan the heron survey');
    const id = conversationInUrl(first);
    const second = await context.newPage();
    await second.goto(`${portal.url}/c/${id}`);
    await status(second, 1, 'completed');

    await second.getByLabel('Message').fill('And the budget for it?');
    await second.keyboard.press('Enter');
    const sent = Date.now();
    await first.locator('[data-turn="2"]').waitFor({ timeout: 2000 });
    const shownAfter = Date.now() - sent;
    await status(first, 2, 'completed');
    assert.equal(
      await first.locator('[data-turn="2"] .message.user p').innerText(),
      'And the budget for it?',
    );
    assert.equal(await first.locator('.turn').count(), 2, 'drawn once');
    await first.screenshot({ path: join(shots, 'connection-second-tab.png') });
    console.log(`the first tab showed the second tab's turn ${shownAfter} ms after it was sent`);
  } finally {
    await browser?.close();
    portal.stop();
  }
});
