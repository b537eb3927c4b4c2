// What the model saw (issue 31, docs/inspector.md): under a turn that selects a skill, carries a
// document and a picture, and follows tool calls across more than three earlier turns and a
// compaction, "What the model saw" opens a dialog with the call's layers and their counts
// (summing to the call's total, and within the estimate's error of the input tokens recorded),
// what memory kept of each earlier call and why (a recent result whole, an older one shortened
// to its outcome), and the turns the summary covers; Esc closes it
// and focus goes back to the button. Screenshots in both themes and at phone width; axe-core
// finds nothing serious.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPortal, scanBoth, sendAndWait, shootWidths, shots } from './portal.mjs';

// A 1 by 1 PNG.
const DOT = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const FILLER = 'The Lisbon office needs its budget for desks, screens, rent and travel checked line by line. '.repeat(14);

async function sendAndSettle(page, text) {
  const turn = (await page.locator('.turn').count()) + 1;
  await page.getByLabel('Message').fill(text);
  await page.keyboard.press('Enter');
  await page.locator(`[data-turn="${turn}"][data-settled="true"]`).waitFor({ timeout: 90000 });
  return turn;
}

// An organisation whose agent has instructions and two skills.
function configuration(folder) {
  const org = join(folder, 'config', 'organisations', 'studio');
  mkdirSync(join(org, 'agents'), { recursive: true });
  writeFileSync(join(org, 'organisation.toml'), 'name = "Studio"\n');
  writeFileSync(
    join(org, 'agents', 'assistant.toml'),
    'name = "Assistant"\nmodel = "demo"\ninstructions = "Answer briefly."\nskills = ["plan", "review"]\n'
      + 'tools = ["count_characters", "publish_note", "ask_user"]\n',
  );
  for (const skill of ['plan', 'review']) {
    mkdirSync(join(org, 'skills', skill), { recursive: true });
    writeFileSync(join(org, 'skills', skill, 'SKILL.md'), `---\nname: ${skill}\ndescription: Use to ${skill}.\n---\n${skill} step by step.\n`);
  }
  return join(folder, 'config');
}

test('m4_m7_c3 the inspector shows a call\'s layers, its skill and attachments, what memory kept (a result shortened to its outcome) and the summary\'s turns', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'portal-inspector-'));
  const { page, close } = await openPortal(['--demo-pace', '0', '--demo-window', '6000', '--config', configuration(folder)], {
    viewport: { width: 1000, height: 1000 },
  });
  try {
    // Tool calls in four turns, then long messages until the agent compacts.
    for (let i = 0; i < 4; i += 1) await sendAndSettle(page, 'Tell me about scripts');
    let turn = 0;
    for (let i = 1; i <= 8; i += 1) {
      turn = await sendAndSettle(page, `Message ${i}: please review the budget. ${FILLER}`);
      if (await page.getByTestId('divider').count()) break;
    }
    assert.ok(await page.getByTestId('divider').count(), 'the agent compacted');
    // Two more turns after it, so the oldest turn memory replays is past the three closest and
    // keeps only its calls' outcomes (rule M7).
    for (let i = 0; i < 2; i += 1) await sendAndSettle(page, 'Tell me about scripts');
    // The turn inspected carries a document and a picture.
    writeFileSync(join(folder, 'notes.md'), '# Notes\n\nThree herons by the Tagus.\n');
    writeFileSync(join(folder, 'dot.png'), DOT);
    await page.getByTestId('attach').setInputFiles([join(folder, 'notes.md'), join(folder, 'dot.png')]);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="attachment-chip"][data-uploaded="true"]').length === 2);
    turn = await sendAndSettle(page, '/plan Tell me about scripts');

    const opener = page.locator(`[data-turn="${turn}"]`).getByTestId('inspect');
    await opener.click();
    const dialog = page.getByTestId('inspector');
    await dialog.getByTestId('inspector-layers').waitFor();
    assert.equal(await dialog.evaluate((d) => d.open && d.matches(':modal')), true, 'a modal dialog');

    const labels = await dialog.locator('.inspector-layers summary').allInnerTexts();
    assert.match(labels[0], /^1\. Portal floor · ≈ [\d,]+ tokens$/);
    const numbers = labels.map((l) => Number(l.split('.')[0]));
    assert.deepEqual(numbers, [1, 2, 3, 4, 5, 6], labels.join(' | '));
    await dialog.locator('[data-layer="skills"] summary').click();
    assert.match(await dialog.locator('[data-layer="skills"] pre').innerText(), /<skill name="plan">/);
    await dialog.locator('[data-layer="catalogue"] summary').click();
    assert.match(await dialog.locator('[data-layer="catalogue"] pre').innerText(), /- review: Use to review\./);
    await dialog.locator('[data-layer="instructions"] summary').click();
    assert.equal(await dialog.locator('[data-layer="instructions"] pre').innerText(), 'Answer briefly.');

    // The layers, the framing and the tools add up to the call's total as counted.
    const call = await page.evaluate(async ([id, n]) => {
      const calls = await (await fetch(`/api/conversations/${id}/turns/${n}/calls`)).json();
      const first = calls.find((c) => c.purpose === 'turn');
      return (await fetch(`/api/conversations/${id}/turns/${n}/calls/${first.call}`)).json();
    }, [decodeURIComponent(new URL(page.url()).pathname.slice(3)), turn]);
    const inspection = call.inspection;
    const summed = inspection.framingTokens
      + inspection.layers.reduce((n, l) => n + l.tokens, 0)
      + inspection.tools.reduce((n, t) => n + t.tokens, 0);
    assert.equal(summed, inspection.totalTokens);
    // Every call of the turn, counted layer by layer, against the input tokens its usage rows
    // recorded (the demo's are the portal's estimate of the whole prompt), within the estimate's
    // stated error of 25 %.
    const [counted, recorded] = await page.evaluate(async ([id, n]) => {
      const base = `/api/conversations/${id}/turns/${n}/calls`;
      let sum = 0;
      for (const c of await (await fetch(base)).json()) {
        sum += (await (await fetch(`${base}/${c.call}`)).json()).inspection.totalTokens;
      }
      const usage = await (await fetch(`/api/conversations/${id}/usage`)).json();
      return [sum, usage.turns.find((t) => t.turn === n).tally.tokens.input];
    }, [decodeURIComponent(new URL(page.url()).pathname.slice(3)), turn]);
    assert.ok(Math.abs(counted - recorded) <= 0.25 * recorded, `counted ${counted}, recorded ${recorded}`);
    const total = await dialog.getByTestId('inspector-total').innerText();
    assert.ok(total.includes(inspection.totalTokens.toLocaleString('en')), total);
    assert.match(total, /estimated/);

    // The summary and the turns it covers; what memory kept of earlier calls, with its rule.
    assert.match(await dialog.getByTestId('inspector-summary').innerText(), /^A summary stands for turns 1–\d+\.$/);
    const kept = await dialog.getByTestId('inspector-memory').innerText();
    assert.match(kept, /count_characters/);
    assert.match(kept, /the result is replayed whole: it is recent and short enough \(rule M4\)/);
    assert.match(kept, /only the outcome \(ok or error\) and a reference are kept \(rule M7\)/, kept);

    // The new message's manifest names the document; the picture is listed at its sent size.
    await dialog.locator('[data-layer="newMessage"] summary').click();
    assert.match(await dialog.locator('[data-layer="newMessage"] pre').innerText(), /notes\.md/);
    assert.match(await dialog.locator('.inspector-body').innerText(), /Picture att_[0-9a-f]+: sent at 1×1\./);
    await dialog.locator('.inspector-layers summary').first().click();
    await page.screenshot({ path: join(shots, 'inspector-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(shots, 'inspector-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    const found = await scanBoth(page, 'inspector open');
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));

    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(shots, 'inspector-phone.png') });
    const width = await dialog.evaluate((d) => d.getBoundingClientRect().width);
    assert.ok(width <= 390, `the dialog fits the phone: ${width}`);

    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await opener.evaluate((b) => b === document.activeElement), true, 'focus is back on the button');
  } finally {
    await close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test('the inspector numbers the layers it shows one after the other, and offers no copy of a body never sent', async () => {
  // The demo agent has no instructions or skills: four of the seven layers are empty.
  const { page, close } = await openPortal(['--demo-pace', '0'], { viewport: { width: 1280, height: 900 } });
  try {
    await sendAndWait(page, 'Tell me about the herons');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    await page.locator('[data-turn="1"]').getByTestId('inspect').click();
    const dialog = page.getByTestId('inspector');
    await dialog.getByTestId('inspector-layers').waitFor();
    const labels = await dialog.locator('.inspector-layers summary').allInnerTexts();
    assert.ok(labels.length < 6, `some layers are empty: ${labels.join(' | ')}`);
    assert.deepEqual(labels.map((l) => Number(l.split('.')[0])), labels.map((_, i) => i + 1), labels.join(' | '));
    assert.match(labels[0], /^1\. Portal floor · /);
    assert.match(labels.at(-1), /New message/);
    // The demo model sends no request body: the note says so, and there is nothing to copy.
    assert.match(await dialog.locator('.inspector-note').innerText(), /sends no request body/);
    assert.equal(await dialog.getByTestId('inspector-copy').count(), 0, 'no copy button without a body');
    await shootWidths(page, 'inspector-numbered');
    const found = await scanBoth(page, 'inspector without a request body');
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));
  } finally {
    await close();
  }
});
