// Editing a message is a mode the page shows (issue 48): Edit takes the message into the composer
// under a bar saying that Send makes a new version of it (or, for an earlier message, a new
// message); Cancel or Esc leaves the mode and gives the composer back the draft it held before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPortal, scanBoth, sendAndWait, shootWidths } from './portal.mjs';

test('Edit shows an edit mode; Cancel and Esc leave it with the draft from before', { timeout: 180000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0'], { viewport: { width: 1280, height: 900 } });
  try {
    await sendAndWait(page, 'Tell me about the herons');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    const message = page.getByLabel('Message');
    const bar = page.locator('[data-testid="edit-bar"]:not([hidden])');
    await message.fill('A draft kept aside');
    assert.equal(await bar.count(), 0, 'no edit mode before Edit');

    // Edit: the message in the composer, under a bar that says what Send does.
    await page.locator('[data-turn="1"] [data-testid="edit"]').click();
    assert.equal(await message.inputValue(), 'Tell me about the herons');
    assert.match(await bar.innerText(), /Editing your message.*Send makes a new version of it/s);
    assert.equal(await message.getAttribute('aria-describedby'), 'edit-bar', 'the message box names the mode');
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');
    await shootWidths(page, 'editing');
    const found = await scanBoth(page, 'editing');
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));

    // Esc in the message box leaves the mode, with the draft from before.
    await message.focus();
    await page.keyboard.press('Escape');
    await bar.waitFor({ state: 'detached' });
    assert.equal(await message.inputValue(), 'A draft kept aside');
    assert.equal(await message.getAttribute('aria-describedby'), null);

    // So does Cancel, and the focus is back in the message box.
    await page.locator('[data-turn="1"] [data-testid="edit"]').click();
    await message.press('End');
    await page.keyboard.type(' of the lake');
    await bar.getByRole('button', { name: 'Cancel' }).click();
    await bar.waitFor({ state: 'detached' });
    assert.equal(await message.inputValue(), 'A draft kept aside');
    // The cursor goes back to the message box on the next frame, once the bar is gone.
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');

    // Sent, the edit is a new version; the mode ends and the draft from before comes back.
    await page.locator('[data-turn="1"] [data-testid="edit"]').click();
    await message.fill('Tell me about the herons of the lake');
    await message.press('Enter');
    await page.locator('[data-turn="2"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    assert.equal(await page.locator('[data-turn="2"] [data-testid="version"]').innerText(), '2/2');
    assert.equal(await bar.count(), 0, 'the mode ends once the edit is sent');
    assert.equal(await message.inputValue(), 'A draft kept aside');

    // An earlier message, edited, is sent as a new message: the bar says so.
    await sendAndWait(page, 'And the storks?');
    await page.locator('[data-turn="3"][data-settled="true"]').waitFor();
    await message.fill('Another draft');
    await page.locator('[data-turn="2"] [data-testid="edit"]').click();
    assert.match(await bar.innerText(), /Editing an earlier message.*Send sends it as a new message/s);
    await shootWidths(page, 'editing-earlier');
    await page.keyboard.press('Escape');
    await bar.waitFor({ state: 'detached' });
    assert.equal(await message.inputValue(), 'Another draft');
  } finally {
    await close();
  }
});
