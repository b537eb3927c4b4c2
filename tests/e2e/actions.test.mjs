// What the person can do with a turn: Copy a reply as plain text, Regenerate the last reply (a new
// turn with the same message; the first stays, as its first version), and Edit a message they
// sent into the composer to send as a new turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });
const settled = (page, turn) => page.locator(`[data-turn="${turn}"][data-settled="true"]`).waitFor({ timeout: 60000 });

test('copy, regenerate, and edit and resend', { timeout: 180000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0']);
  let browser;
  try {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: portal.url });
    const page = await context.newPage();
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await status(page, 1, 'completed');
    await settled(page, 1);

    // Copy: the reply's answer as the model wrote it, markdown and all, to paste anywhere.
    const first = page.locator('[data-turn="1"]');
    await first.getByTestId('copy').click();
    await first.getByTestId('copy').filter({ hasText: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(copied.startsWith('The tool answered: 31 characters'), 'the whole answer');
    assert.ok(copied.includes('## What plays out here\n\n- **Whole clusters**'), 'its markdown as written');
    assert.ok(copied.includes('```rust\nlet frame = playout.tick(now_ms);\ndraw(&frame);\n```'), 'code as written');
    assert.ok(copied.includes('👨‍👩‍👧‍👦') && !copied.includes('<'), 'no markup, emoji whole');
    assert.ok(copied.includes('\n\n'), 'paragraphs stay apart');
    // A code block's Copy copies its code alone.
    await first.locator('.code-copy').click();
    await first.locator('.code-copy').filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'let frame = playout.tick(now_ms);\ndraw(&frame);\n');

    // Regenerate: only the latest reply offers it; it asks again as a new turn.
    await first.getByTestId('regenerate').click();
    await status(page, 2, 'completed');
    await settled(page, 2);
    assert.equal(await page.locator('[data-turn="2"] .message.user p').innerText(), 'Tell me about writing systems');
    assert.equal(await first.getByTestId('regenerate').count(), 0, 'an earlier reply does not regenerate');
    assert.equal(await page.locator('.turn').count(), 2, 'the first turn stays');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="version"]').innerText(), '2/2', 'as the first version');

    // Edit: the first message becomes the draft; changed and sent, it is a new turn (turn 1 is
    // not the latest, so not a version of it).
    await page.locator('[data-turn="2"] [data-testid="version-before"]').click();
    await first.locator('.message.user').waitFor();
    await first.locator('.message.user').hover();
    await first.getByTestId('edit').click();
    const message = page.getByLabel('Message');
    assert.equal(await message.inputValue(), 'Tell me about writing systems');
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');
    await message.press('End');
    await page.keyboard.type(', especially Thai');
    await page.screenshot({ path: join(shots, 'actions-edit.png') });
    await message.press('Enter');
    await status(page, 3, 'completed');
    await settled(page, 3);
    assert.equal(await page.locator('[data-turn="3"] .message.user p').innerText(), 'Tell me about writing systems, especially Thai');
    assert.equal(await page.locator('.turn').count(), 3);
    await page.screenshot({ path: join(shots, 'actions-done.png'), fullPage: true });
  } finally {
    await browser?.close();
    portal.stop();
  }
});
