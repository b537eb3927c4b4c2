// Following the reply: at the bottom, the page follows the playout; scrolling up stops that and
// "Jump to latest" shows while more lands below; jumping follows again; a reloaded conversation
// opens at its end; and controls that need the person are brought into view with the focus.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 90000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

/** How far the window is from the page's end, in CSS pixels. */
const fromEnd = (page) => page.evaluate(() => document.documentElement.scrollHeight - (window.scrollY + window.innerHeight));

/** The page's height now. */
const height = (page) => page.evaluate(() => document.documentElement.scrollHeight);

test('the page follows the reply, stops when the reader scrolls up, and jumps to the latest', { timeout: 240000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.6'], { viewport: { width: 900, height: 560 } });
  try {
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');

    // Following: as the reply grows past the window, the window stays at its end.
    await page.waitForFunction(() => document.documentElement.scrollHeight > window.innerHeight + 300, null, { timeout: 60000 });
    const grownFrom = await height(page);
    await page.waitForFunction((h) => document.documentElement.scrollHeight > h + 60, grownFrom, { timeout: 60000 });
    assert.ok((await fromEnd(page)) <= 40, `at the end while following (${await fromEnd(page)} px above it)`);
    await page.screenshot({ path: join(shots, 'follow-following.png') });

    // Scrolling up stops following: the page stays where the reader went while text lands below.
    await page.mouse.move(450, 200);
    await page.mouse.wheel(0, -300);
    await page.waitForFunction(() => window.scrollY > 0 && document.documentElement.scrollHeight - (window.scrollY + window.innerHeight) > 200);
    const readingAt = await page.evaluate(() => window.scrollY);
    const before = await height(page);
    await page.waitForFunction((h) => document.documentElement.scrollHeight > h + 40, before, { timeout: 60000 });
    assert.equal(await page.evaluate(() => window.scrollY), readingAt, 'not pulled back down');
    const jump = page.getByTestId('jump-to-latest');
    await jump.waitFor();
    await page.screenshot({ path: join(shots, 'follow-stopped.png') });

    // Jump to latest: at the end again, following, and the button is gone.
    await jump.click();
    await page.waitForFunction(() => document.documentElement.scrollHeight - (window.scrollY + window.innerHeight) <= 40);
    assert.equal(await jump.count(), 0);
    await status(page, 1, 'completed');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 90000 });
    assert.ok((await fromEnd(page)) <= 40, 'followed to the reply\'s end');

    // A reloaded conversation opens at its end.
    await page.reload();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    await page.waitForFunction(() => document.documentElement.scrollHeight - (window.scrollY + window.innerHeight) <= 40);
    assert.ok((await page.evaluate(() => window.scrollY)) > 0);

    // A turn waiting for approval takes no focus: the message box keeps it, and the line under it
    // leads to the request, which comes into view above the composer.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByLabel('Message').fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 2, 'paused');
    const to = page.getByTestId('to-request');
    await to.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Message');
    await to.click();
    await page.waitForFunction(() => document.activeElement?.matches('[data-testid="approval-card"] .decision'));
    const approve = page.getByTestId('approve');
    const box = await approve.boundingBox();
    const dock = await page.locator('.dock').boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= dock.y, `Approve is in view above the composer: ${JSON.stringify([box, dock])}`);
    await page.screenshot({ path: join(shots, 'follow-approval-in-view.png') });
  } finally {
    await close();
  }
});
