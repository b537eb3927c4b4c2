// A model that fails is shown failing, in words for the person, with Retry: a fake
// OpenAI-compatible endpoint on loopback answers 500, then 429 with Retry-After, then four words
// and silence ("Still waiting for the model…" after 20 s, and the turn fails once the adapter
// gives up), and Retry succeeds once it answers again. Each Retry is a new turn with the same
// message, attachments and effort; the failed turns stay as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots, axeScan } from './portal.mjs';
import { fakeUpstream, REPLY } from './upstream.mjs';

const status = (page, turn, wanted, timeout = 30000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

test('failures show their reason, the silent model a note, and Retry succeeds once the model answers', { timeout: 240000 }, async () => {
  const upstream = await fakeUpstream({ idleSeconds: 25 });
  const portal = await startPortal(['--models', upstream.models]);
  const files = mkdtempSync(join(tmpdir(), 'portal-failures-'));
  let browser;
  try {
    const notes = join(files, 'notes.md');
    writeFileSync(notes, '# Notes\n\nHerons nest in colonies.\n');
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    // The header names the model the agent runs on.
    await page.getByTestId('model-label').filter({ hasText: 'Fake GPT' }).waitFor();

    // HTTP 500: the turn fails with the adapter's sentence, and nothing the endpoint said.
    upstream.answer('fail');
    await page.getByTestId('attach').setInputFiles(notes);
    await page.locator('[data-testid="attachment-chip"][data-uploaded="true"]').waitFor();
    await page.getByLabel('Effort').selectOption('high');
    await page.getByLabel('Message').fill('Where do herons nest?');
    await page.getByLabel('Message').press('Enter');
    await status(page, 1, 'failed');
    const first = page.locator('[data-turn="1"] [data-testid="failure"]');
    assert.match(await first.innerText(), /The model's endpoint failed \(HTTP 500\); send the message again later\./);
    assert.doesNotMatch(await page.locator('main').innerText(), /sk-live|server had an error/, 'nothing the endpoint said reaches the page');
    await page.screenshot({ path: join(shots, 'failure-500.png') });

    // 429 with Retry-After: the wait is said. Retry sent the same message, file and effort.
    upstream.answer('rate');
    await page.locator('[data-turn="1"]').getByTestId('retry').click();
    await status(page, 2, 'failed');
    assert.match(await page.locator('[data-turn="2"] [data-testid="failure"]').innerText(), /rate limiting requests; wait 20 s and send the message again/);
    assert.equal(await page.locator('[data-turn="2"] .message.user p').innerText(), 'Where do herons nest?');
    assert.deepEqual(await page.locator('[data-turn="2"]').getByTestId('attachment-name').allInnerTexts(), ['notes.md']);
    assert.equal(await page.locator('[data-turn="2"]').getByTestId('effort').innerText(), 'Effort: high');
    assert.equal(await page.locator('[data-turn="1"]').getByTestId('retry').count(), 0, 'only the latest failure offers Retry');
    await page.screenshot({ path: join(shots, 'failure-429.png') });

    // Four words, then silence: after 20 s the page says it is still waiting, with Stop; then the
    // adapter gives up and the turn fails saying so.
    upstream.answer('hang');
    await page.locator('[data-turn="2"]').getByTestId('retry').click();
    await status(page, 3, 'running');
    // Before the first word: the pending indicator.
    await page.locator('[data-turn="3"] [data-testid="pending"]').waitFor();
    await page.screenshot({ path: join(shots, 'pending.png') });
    await page.locator('[data-turn="3"] .block.answer').filter({ hasText: 'think about' }).waitFor({ timeout: 15000 });
    assert.equal(await page.getByTestId('still-waiting').count(), 0);
    await page.getByTestId('still-waiting').waitFor({ timeout: 30000 });
    assert.equal(await page.getByTestId('still-waiting').innerText(), 'Still waiting for the model…');
    assert.equal(await page.locator('[data-turn="3"]').getByTestId('cancel').count(), 1, 'Stop is at hand');
    await page.screenshot({ path: join(shots, 'failure-still-waiting.png') });
    await status(page, 3, 'failed', 30000);
    assert.match(await page.locator('[data-turn="3"] [data-testid="failure"]').innerText(), /The model stopped answering for 25 s before it finished/);
    assert.equal(await page.getByTestId('still-waiting').count(), 0);
    assert.match(await page.locator('[data-turn="3"] .block.answer').innerText(), /Let me think about/, 'what came is kept');
    await page.screenshot({ path: join(shots, 'failure-stalled.png') });
    for (const theme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: theme });
      const violations = await axeScan(page);
      assert.deepEqual(violations, [], `${theme}: ${JSON.stringify(violations, null, 1)}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // The endpoint answers again: Retry succeeds.
    upstream.answer('reply');
    await page.locator('[data-turn="3"]').getByTestId('retry').click();
    await status(page, 4, 'completed');
    await page.locator('[data-turn="4"][data-settled="true"]').waitFor({ timeout: 30000 });
    assert.equal(await page.locator('[data-turn="4"] .block.answer').innerText(), REPLY);
    assert.equal(await page.locator('[data-turn="4"] [data-testid="failure"]').count(), 0);
    await page.screenshot({ path: join(shots, 'failure-retried.png'), fullPage: true });

    // Every call asked the same message at the same effort.
    const asked = upstream.requests.map((r) => [r.reasoning_effort, r.messages.at(-1).content]);
    assert.equal(asked.length, 4);
    for (const [effort, content] of asked) {
      assert.equal(effort, 'high');
      assert.match(JSON.stringify(content), /Where do herons nest\?/);
      assert.match(JSON.stringify(content), /notes\.md/);
    }
    // Reloaded, the failures keep their reasons.
    await page.reload();
    await status(page, 4, 'completed');
    assert.match(await page.locator('[data-turn="1"] [data-testid="failure"]').innerText(), /HTTP 500/);
    assert.match(await page.locator('[data-turn="3"] [data-testid="failure"]').innerText(), /stopped answering/);
  } finally {
    await browser?.close();
    portal.stop();
    upstream.close();
    rmSync(files, { recursive: true, force: true });
  }
});
