// A lone server restarted while a reply streams (SIGTERM, as systemd, Docker and Kubernetes
// send): the reply goes on through the grace, is then cut off, and the page says why under it,
// with Retry; once the server is back on the same port and data, Retry sends the message again
// and the new reply completes (rule D2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

const REASON = 'The server stopped for a restart while this reply was being written; send the message again.';

test('d2 a reply cut off by a restart says why under it, and Retry works once the server is back', { timeout: 180000 }, async () => {
  let portal = await startPortal(['--demo-pace', '1', '--shutdown-grace-seconds', '2']);
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

    const { port, data } = portal;
    const asked = Date.now();
    await portal.stop({ keep: true });
    const stoppedAfter = Date.now() - asked;
    assert.ok(stoppedAfter >= 1500 && stoppedAfter < 15000, `the server took its 2 s grace, then stopped: ${stoppedAfter} ms`);
    await status(page, 1, 'cut_off', 10000);
    const failure = page.locator('[data-turn="1"]').getByTestId('failure');
    assert.equal(await failure.locator('p').innerText(), REASON);
    await page.screenshot({ path: join(shots, 'restart-cut-off.png') });

    portal = await startPortal(['--demo-pace', '0.2'], { port, data });
    await page.locator('[data-turn="1"]').getByTestId('retry').click();
    await status(page, 2, 'completed');
    assert.equal(await page.locator('[data-turn="2"]').getByTestId('failure').count(), 0);
    // The retried reply is the message's second version; the cut-off one is the first.
    await page.reload();
    await status(page, 2, 'completed');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="version"]').innerText(), '2/2');
    await page.locator('[data-turn="2"] [data-testid="version-before"]').click();
    await status(page, 1, 'cut_off');
    assert.equal(
      await page.locator('[data-turn="1"]').getByTestId('failure').locator('p').innerText(),
      REASON,
      'a reload keeps why',
    );
    await page.screenshot({ path: join(shots, 'restart-retried.png') });
  } finally {
    await browser?.close();
    portal.stop();
  }
});
