// A walk through a conversation in the browser: an agent picked for the new conversation, a skill
// accepted from the /slug completion (S1), a document attached as a chip with its reading progress
// (A2) and a refused upload saying why, the reply, an approval request approved, a running turn
// stopped and drawn cut off, a picture for the agent's blind model refused with the draft kept (A5), and the whole conversation drawn again after a reload: plain text
// (R10), the effort each turn ran with (E2), the attachment's name and the cut-off turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, startPortal, launchBrowser, shots } from './portal.mjs';

const fixtures = join(root, 'tests', 'fixtures', 'e2e');
// A 1×1 PNG.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

async function status(page, turn, wanted, timeout = 30000) {
  await page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });
}

test('s1_a2_e2_l_walk an agent, a skill, a document, an approval, a stop and a reload', async () => {
  const portal = await startPortal([
    '--demo-pace', '0.3', '--config', join(fixtures, 'config'), '--models', join(fixtures, 'models.toml'),
  ]);
  const files = mkdtempSync(join(tmpdir(), 'portal-walk-'));
  let browser;
  try {
    const notes = join(files, 'field-notes.md');
    writeFileSync(notes, '# Field notes\n\nThe survey counted 41 herons at the lake in May.\n');
    const unknown = join(files, 'archive.bin');
    writeFileSync(unknown, Buffer.from([0, 159, 146, 150, 1, 2, 3, 255, 0, 0, 7]));
    const dot = join(files, 'dot.png');
    writeFileSync(dot, Buffer.from(PIXEL, 'base64'));

    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();

    // The agent picker offers the configuration's agents; the second is picked.
    const picker = page.getByTestId('agent-picker');
    await picker.waitFor();
    assert.deepEqual(await picker.locator('option').allInnerTexts(), ['Assistant', 'Research helper']);
    await picker.selectOption({ label: 'Research helper' });

    // S1: `/` opens the completion; Enter accepts the highlighted skill.
    const message = page.getByLabel('Message');
    await message.click();
    await page.keyboard.type('/fact');
    const option = page.getByRole('listbox', { name: 'Commands and skills' }).getByRole('option');
    await option.first().waitFor();
    assert.equal(await option.count(), 1);
    assert.match(await option.first().innerText(), /\/fact-check/);
    await page.screenshot({ path: join(shots, 'walk-skill-completion.png') });
    await page.keyboard.press('Enter');
    assert.equal(await message.inputValue(), '/fact-check ');
    assert.equal(await option.count(), 0, 'the completion closes once accepted');
    await page.keyboard.type('is the heron count right?');

    // A refused upload says why on its chip, as an alert, and leaves the draft; the person
    // dismisses it.
    await page.getByTestId('attach').setInputFiles(unknown);
    const refusal = page.locator('.attachment-chip.refused [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /“archive\.bin” is not a kind of file the portal reads/);
    await page.getByRole('button', { name: 'Dismiss the error about archive.bin' }).click();
    assert.equal(await page.getByTestId('attachment-chip').count(), 0);
    const alert = page.getByRole('alert');
    assert.equal(await message.inputValue(), '/fact-check is the heron count right?');

    // A2: the document's chip shows its name and reading progress once uploaded.
    await page.getByTestId('attach').setInputFiles(notes);
    const chip = page.locator('[data-testid="attachment-chip"][data-uploaded="true"]');
    await chip.waitFor();
    assert.match(await chip.innerText(), /field-notes\.md\s*Ready/);
    await page.screenshot({ path: join(shots, 'walk-attachment-chip.png') });

    // A5: a picture for the agent's model, which cannot see, refuses the message; the draft and
    // both chips stay, and the message goes once the picture is removed.
    await page.getByTestId('attach').setInputFiles(dot);
    await page.locator('[data-testid="attachment-chip"][data-uploaded="true"]').nth(1).waitFor();
    await message.press('Enter');
    await alert.filter({ hasText: 'cannot see' }).waitFor();
    assert.match(await alert.innerText(), /the model “[^”]+” cannot see pictures, and “dot\.png” is a picture/);
    assert.equal(await page.locator('.turn').count(), 0, 'nothing is recorded');
    assert.equal(await message.inputValue(), '/fact-check is the heron count right?');
    assert.equal(await page.getByTestId('attachment-chip').count(), 2);
    await page.screenshot({ path: join(shots, 'walk-picture-refused.png') });
    await page.getByRole('button', { name: 'Remove dot.png' }).click();
    assert.deepEqual(await page.locator('[data-testid="attachment-chip"] .name').allInnerTexts(), ['field-notes.md']);

    await message.press('Enter');
    await status(page, 1, 'completed');
    assert.equal(await page.getByTestId('attachment-chip').count(), 0, 'sent attachments leave the composer');
    assert.equal(await message.inputValue(), '', 'the sent draft is cleared');
    const first = page.locator('[data-turn="1"]');
    assert.equal(await first.locator('.message.user p').innerText(), '/fact-check is the heron count right?');
    assert.deepEqual(await first.getByTestId('attachment-name').allInnerTexts(), ['field-notes.md']);
    assert.equal(await first.getByTestId('effort').innerText(), 'Effort: high', "the agent's default effort");
    assert.equal(await page.getByTestId('agent-name').innerText(), 'Research helper');
    assert.equal(await page.getByTestId('agent-picker').count(), 0, 'the agent is fixed once the conversation opens');

    // An approval request, approved, with the effort overridden for this message (E1).
    await page.getByLabel('Effort').selectOption('low');
    await message.fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 2, 'paused');
    const approve = page.getByTestId('approve');
    await approve.waitFor();
    await page.locator('[data-turn="2"] [data-testid="approval-card"]').waitFor();
    await page.screenshot({ path: join(shots, 'walk-approval-request.png') });
    await approve.click();
    await status(page, 2, 'completed');
    assert.equal(await page.locator('[data-turn="2"]').getByTestId('effort').innerText(), 'Effort: low');
    assert.equal(await page.getByLabel('Effort').inputValue(), '', "E1: the override was for that message; the agent's effort is back");

    // A running turn stopped: drawn cut off.
    await message.fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    const third = page.locator('[data-turn="3"]');
    await status(page, 3, 'running');
    await third.locator('.block').first().waitFor({ timeout: 15000 });
    // The turn before may still be playing out its reply, with its own Stop (issue 48).
    await third.getByTestId('cancel').click();
    await status(page, 3, 'cut_off');
    assert.equal(await third.getByTestId('cut-off').innerText(), 'Stopped');
    await page.locator('[data-turn="3"][data-settled="true"]').waitFor({ timeout: 30000 });
    assert.equal(await third.getByTestId('cancel').count(), 0, 'a cut-off turn, settled, has no controls');
    await page.screenshot({ path: join(shots, 'walk-cut-off.png'), fullPage: true });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 30000 });
    const settledAnswer = await first.locator('.block.answer .body').innerHTML();

    // After a reload: the same conversation as plain text, with its efforts, attachment and stop.
    await page.reload();
    await status(page, 3, 'cut_off');
    assert.equal(await page.locator('.turn').count(), 3);
    assert.equal(await page.getByTestId('agent-name').innerText(), 'Research helper');
    assert.deepEqual(await first.getByTestId('attachment-name').allInnerTexts(), ['field-notes.md']);
    assert.deepEqual(await page.getByTestId('effort').allInnerTexts(), ['Effort: high', 'Effort: low', 'Effort: high']);
    assert.equal(await page.getByLabel('Effort').inputValue(), '', "the composer shows the agent's default (E1); each turn its own effort (E2)");
    assert.equal(await page.locator('[data-turn="2"][data-turn-status="completed"]').count(), 1);
    assert.equal(await third.getByTestId('cut-off').innerText(), 'Stopped');
    assert.equal(await first.locator('.block.answer .body').innerHTML(), settledAnswer);
    assert.equal(await page.locator('.turn .w, .turn .caret').count(), 0, 'no playout after a reload (R10)');
    await page.screenshot({ path: join(shots, 'walk-reloaded.png'), fullPage: true });
  } finally {
    await browser?.close();
    portal.stop();
    rmSync(files, { recursive: true, force: true });
  }
});
