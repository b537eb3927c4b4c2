// The demo's tool calls drawn as cards: the tool's name, its arguments on one line, its state and
// its result on demand; an approval request as a card naming the action; a declined call shown as
// declined, never in the words written for the model; a double-clicked Approve decides once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

test('tool calls are cards with their state, arguments and result; approvals name the action', { timeout: 180000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.3']);
  try {
    const decisions = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/decision')) decisions.push(JSON.parse(request.postData()));
    });

    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');

    // The call: running, then done, with its arguments on one line and its result on demand.
    const card = page.locator('[data-turn="1"] [data-testid="tool-card"]');
    await card.waitFor({ timeout: 30000 });
    assert.equal(await card.locator('.tool-name').innerText(), 'count_characters');
    assert.match(await card.locator('.tool-summary').innerText(), /^“?Tell me about writing systems”?$/);
    await page.locator('[data-turn="1"] [data-testid="tool-card"][data-state="done"]').waitFor({ timeout: 30000 });
    assert.equal(await card.locator('.tool-state').innerText(), 'Done');
    const result = card.locator('.tool-result pre');
    assert.equal(await result.isVisible(), false, 'the result opens on demand');
    await card.locator('.tool-result summary').click();
    assert.equal(await result.innerText(), '31 characters, 5 words, 35 bytes');
    await status(page, 1, 'completed');
    await page.screenshot({ path: join(shots, 'tool-cards.png'), fullPage: true });

    // An approval request: a card with the action in plain words; declined, the call says so.
    await page.getByLabel('Message').fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 2, 'paused');
    const approval = page.locator('[data-turn="2"] [data-testid="approval-card"]');
    assert.match(await approval.locator('.approval-action').innerText(), /^Publish the note /);
    assert.equal(await approval.locator('.approval-state').innerText(), 'Waiting for your approval');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="tool-card"]').getAttribute('data-state'), 'awaiting_approval');
    await page.screenshot({ path: join(shots, 'tool-cards-approval.png') });
    await page.getByTestId('decline').click();
    await status(page, 2, 'completed');
    await page.locator('[data-turn="2"] [data-testid="tool-card"][data-state="declined"]').waitFor();
    assert.equal(await approval.locator('.approval-state').innerText(), 'You declined');
    assert.equal(await page.locator('[data-turn="2"] [data-testid="tool-card"] .tool-result').count(), 0, 'a declined call has no result to open');
    const words = await page.locator('main').innerText();
    assert.doesNotMatch(words, /Not run:|Do not call it again/, 'the words for the model stay out of the page');
    await page.screenshot({ path: join(shots, 'tool-cards-declined.png'), fullPage: true });

    // A double-clicked Approve decides once and shows no refusal.
    await page.getByLabel('Message').fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 3, 'paused');
    await page.getByTestId('approve').dblclick();
    await status(page, 3, 'completed');
    await page.locator('[data-turn="3"] [data-testid="tool-card"][data-state="done"]').waitFor();
    assert.equal(await approval.count(), 1);
    assert.equal(await page.locator('[data-turn="3"] [data-testid="approval-card"] .approval-state').innerText(), 'You approved');
    assert.equal(await page.locator('.problem').count(), 0, 'no refusal is shown');
    assert.equal(decisions.length, 2, `one decision each: ${JSON.stringify(decisions)}`);

    // Reloaded, the cards read the same.
    await page.reload();
    await status(page, 3, 'completed');
    assert.deepEqual(
      await page.locator('[data-testid="tool-card"]').evaluateAll((cards) => cards.map((c) => c.dataset.state)),
      ['done', 'declined', 'done'],
    );
  } finally {
    await close();
  }
});
