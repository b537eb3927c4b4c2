// Two approvals in one turn, answered from the browser: the demo asks to publish two notes one
// after the other, so the turn pauses twice. Each time Approve sends a decision on exactly the
// call the turn waits on (the second round's call, not the first's), and the turn completes. The
// decision sits in the card that asks for it (issue 48), Stop below the turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, scanBoth, shootWidths, shots } from './portal.mjs';

test('two approvals in one turn are each answered from the browser', async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.3']);
  try {
    const decisions = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/decision')) decisions.push(JSON.parse(request.postData()));
    });
    await page.getByLabel('Message').fill('Please publish two notes on the herons');
    await page.keyboard.press('Enter');

    const turn = page.locator('[data-turn="1"]');
    const paused = page.locator('[data-turn="1"][data-turn-status="paused"]');
    await paused.waitFor({ timeout: 30000 });
    assert.equal(await turn.locator('[data-testid="approval-card"]').count(), 1);
    const card = turn.getByTestId('approval-card');
    assert.equal(await card.getByTestId('approve').count(), 1, 'Approve is in the card');
    assert.equal(await card.getByTestId('decline').count(), 1, 'Decline is in the card');
    assert.equal(await page.getByTestId('approve').count(), 1, 'and nowhere else');
    assert.equal(await turn.locator('.turn-controls [data-testid="cancel"]').count(), 1, 'Stop stays under the turn');
    await page.screenshot({ path: join(shots, 'approvals-first.png') });
    const found = await scanBoth(page, 'an approval awaiting its decision');
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));
    await shootWidths(page, 'approval-decision');
    await page.getByTestId('approve').click();

    // The second round: a second request, and the turn paused again on it alone.
    await turn.locator('[data-testid="approval-card"]').nth(1).waitFor({ timeout: 30000 });
    await paused.waitFor({ timeout: 30000 });
    await page.screenshot({ path: join(shots, 'approvals-second.png') });
    assert.equal(await turn.getByTestId('approval-card').nth(0).getByTestId('approve').count(), 0, 'the first card was decided');
    await turn.getByTestId('approval-card').nth(1).getByTestId('approve').click();
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 30000 });
    await page.screenshot({ path: join(shots, 'approvals-done.png'), fullPage: true });

    assert.equal(decisions.length, 2, `one decision per round: ${JSON.stringify(decisions)}`);
    assert.notEqual(decisions[0].call_id, decisions[1].call_id, 'the second round decides the second call');
    assert.ok(decisions.every((d) => d.approve === true));
    assert.equal(await page.locator('.problem').count(), 0, 'no refusal was shown');
    assert.equal(await page.getByTestId('approve').count(), 0, 'a completed turn has no controls');
  } finally {
    await close();
  }
});
