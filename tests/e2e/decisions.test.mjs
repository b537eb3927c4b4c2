// Decisions a person makes on purpose (issue 32): a card that needs the person never takes the
// focus, so typing through an approval or a question arriving approves and answers nothing and
// loses nothing; and a paused conversation opened again is live: Approve or Answer starts the
// reply at once with one request, and the card shows the decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots, scanBoth } from './portal.mjs';

/** Counts the decision and answer requests the page sends. */
function countRequests(page) {
  const sent = { decision: 0, answer: 0 };
  page.on('request', (request) => {
    if (request.method() !== 'POST') return;
    if (request.url().endsWith('/decision')) sent.decision += 1;
    if (request.url().endsWith('/answer')) sent.answer += 1;
  });
  return sent;
}

const focused = (page) => page.evaluate(() => document.activeElement?.getAttribute('aria-label')
  ?? document.activeElement?.dataset.testid ?? document.activeElement?.tagName);

for (const [what, message, card] of [
  ['an approval', 'Please publish a note on the herons', 'approval-card'],
  ['a question', 'Could you clarify scripts for me', 'question'],
]) {
  test(`typing on while ${what} arrives goes on into the message box and decides nothing`, async () => {
    const { page, close } = await openPortal(['--demo-pace', '0.3']);
    try {
      const sent = countRequests(page);
      await page.getByLabel('Message').fill(message);
      await page.keyboard.press('Enter');
      // The next message, typed key by key (spaces and all) until the card is there and on
      // through it for a while.
      const paused = page.locator('[data-turn="1"][data-turn-status="paused"]');
      const words = 'and then tell me more about the herons of the lake, their nests and the reeds ';
      let typed = '';
      let arrived = -1;
      for (let n = 0; n < 2000 && (arrived < 0 || typed.length < arrived + 24); n += 1) {
        const key = words[n % words.length];
        await page.keyboard.type(key, { delay: 10 });
        typed += key;
        if (arrived < 0 && await paused.count() === 1) arrived = typed.length;
      }
      assert.ok(arrived >= 0, 'the card arrived while typing');
      for (const key of ' still typing') await page.keyboard.type(key, { delay: 10 });
      assert.equal(await page.getByLabel('Message').inputValue(), `${typed} still typing`, 'nothing typed was lost');
      assert.equal(await focused(page), 'Message', 'the message box kept the focus');
      assert.deepEqual(sent, { decision: 0, answer: 0 }, 'nothing was approved or answered');
      assert.equal(await paused.count(), 1, 'the turn still waits');
      if (card === 'approval-card') {
        assert.equal(await page.getByTestId('approval-card').getAttribute('data-state'), 'awaiting_approval');
      }
      // The line under the message box says so and is the next Tab stop; it leads to the card.
      const to = page.getByTestId('to-request');
      assert.match(await to.innerText(), what === 'an approval' ? /waits for your approval/ : /asks you a question/);
      await page.screenshot({ path: join(shots, `decisions-typing-through-${card}.png`) });
      const found = await scanBoth(page, `typing through ${what}`);
      assert.deepEqual(found, [], JSON.stringify(found, null, 1));
      await page.getByLabel('Message').focus();
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'to-request');
      await page.keyboard.press('Enter');
      // The decision in the approval card, or the answer's controls under the question.
      const target = card === 'approval-card' ? '[data-testid="approval-card"] .decision' : '.turn-controls';
      await page.waitForFunction((selector) => document.activeElement?.matches(selector), target);
      assert.deepEqual(sent, { decision: 0, answer: 0 }, 'reaching the card decides nothing');
      await page.keyboard.press('Tab');
      if (card === 'approval-card') {
        assert.equal(await focused(page), 'approve');
        await page.keyboard.press('Enter');
      } else {
        assert.equal(await focused(page), 'Answer');
        await page.keyboard.type('The Latin ones');
        await page.keyboard.press('Enter');
      }
      await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
      assert.equal(sent.decision + sent.answer, 1, 'one deliberate decision');
      assert.equal(await focused(page), 'Message', 'after the decision the focus is back in the message box');
      assert.equal(await page.getByLabel('Message').inputValue(), `${typed} still typing`);
    } finally {
      await close();
    }
  });
}

for (const [what, message] of [
  ['approve', 'Please publish a note on the herons'],
  ['answer', 'Could you clarify scripts for me'],
]) {
  test(`${what} right after opening a paused conversation again starts the reply at once, once`, async () => {
    const { page, close } = await openPortal(['--demo-pace', '0.3']);
    try {
      await page.getByLabel('Message').fill(message);
      await page.keyboard.press('Enter');
      await page.locator('[data-turn="1"][data-turn-status="paused"]').waitFor({ timeout: 30000 });
      await page.waitForFunction(() => location.pathname.startsWith('/c/'));
      await page.reload();
      const turn = page.locator('[data-turn="1"][data-turn-status="paused"]');
      await turn.waitFor();
      const sent = countRequests(page);
      const before = await page.locator('[data-turn="1"] .block').count();
      if (what === 'approve') {
        await page.getByTestId('approve').click();
        // The decision shows at once, before the server's answer.
        await page.locator('[data-testid="approval-card"][data-state="running"], [data-testid="approval-card"][data-state="done"]').waitFor({ timeout: 1000 });
        assert.equal(await page.getByTestId('approve').count(), 0, 'no second Approve to click');
      } else {
        await page.getByLabel('Answer').fill('The Latin ones');
        await page.getByLabel('Answer').press('Enter');
      }
      const clicked = Date.now();
      await page.waitForFunction((n) => document.querySelectorAll('[data-turn="1"] .block').length > n, before, { timeout: 1000 });
      const started = Date.now() - clicked;
      await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
      assert.deepEqual(sent, what === 'approve' ? { decision: 1, answer: 0 } : { decision: 0, answer: 1 });
      if (what === 'answer') {
        // The answer is the person's own message under the question, also after a reload.
        const answer = page.locator('[data-turn="1"] [data-testid="person-answer"]');
        assert.equal(await answer.innerText(), 'The Latin ones');
        await page.reload();
        await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor();
        assert.equal(await answer.innerText(), 'The Latin ones');
      }
      assert.equal(await page.locator('.problem').count(), 0, 'no refusal was shown');
      await page.screenshot({ path: join(shots, `decisions-reopened-${what}.png`) });
      console.log(`reopened ${what}: the reply started ${started} ms after the click`);
    } finally {
      await close();
    }
  });
}
