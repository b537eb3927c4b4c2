// Rule E1: an agent has a default effort, and a message can override it for that message alone.
// The override applies to the message it was chosen for; the composer then shows the agent's
// effort again; each turn shows the effort it ran with (E2); and a reopened conversation's
// composer shows the agent's default, whatever the last turn ran with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

test('e1 a one-off effort applies to its message alone and resets', { timeout: 120000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0']);
  try {
    const sent = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/messages')) sent.push(JSON.parse(request.postData()).effort);
    });
    const effort = page.getByLabel('Effort');
    assert.equal(await effort.inputValue(), '');
    assert.equal(await effort.locator('option:checked').innerText(), "Agent's effort (medium)");

    // The override goes with its message, and the composer goes back to the agent's effort.
    await effort.selectOption('low');
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await status(page, 1, 'completed');
    assert.equal(await effort.inputValue(), '', 'the override was for that message alone');
    assert.equal(await page.locator('[data-turn="1"]').getByTestId('effort').innerText(), 'Effort: low');

    // The next message runs with the agent's effort.
    await page.getByLabel('Message').fill('Tell me more');
    await page.keyboard.press('Enter');
    await status(page, 2, 'completed');
    assert.equal(await page.locator('[data-turn="2"]').getByTestId('effort').innerText(), 'Effort: medium');
    assert.deepEqual(sent, ['low', null]);

    // Reopened after a turn that overrode it, the composer shows the agent's default; each turn
    // shows the effort it ran with.
    await effort.selectOption('high');
    await page.getByLabel('Message').fill('Tell me even more');
    await page.keyboard.press('Enter');
    await status(page, 3, 'completed');
    await page.reload();
    await status(page, 3, 'completed');
    assert.equal(await effort.inputValue(), '', "the reopened conversation's composer shows the agent's default");
    assert.deepEqual(await page.getByTestId('effort').allInnerTexts(), ['Effort: low', 'Effort: medium', 'Effort: high']);
    await page.screenshot({ path: join(shots, 'effort-e1.png'), fullPage: true });
  } finally {
    await close();
  }
});
