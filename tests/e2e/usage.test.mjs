// Usage and quotas (issue 29): a reply's cost under it, opened for its calls and tokens, the
// conversation's total in the header, and a message past the user's daily quota refused with the
// server's sentence, nothing sent. The demo model is priced by a models file; Alice may spend
// 100 tokens a day, which the first reply already passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startPortal, launchBrowser, shots, usersConfig, people, signIn, sendAndWait, axeScan,
} from './portal.mjs';

test('a reply shows what it cost, the header the total; a message past the quota is refused in words', async () => {
  const { config, remove } = usersConfig();
  appendFileSync(
    join(config, 'organisations', 'acme', 'organisation.toml'),
    '\n[[quotas]]\napplies_to = "each_user"\nperiod = "day"\ntokens = 100\n',
  );
  const models = join(config, 'models.toml');
  writeFileSync(
    models,
    '[[models]]\nname = "demo"\nkind = "demo"\n'
      + 'price = { currency = "USD", input = 3.0, cached_input = 0.3, output = 15.0 }\n',
  );
  const portal = await startPortal(['--demo-pace', '0.1', '--config', config, '--models', models]);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, portal.url, people.alice);
    await sendAndWait(page, 'Plan the heron survey');

    // The reply's cost: the demo's tokens are estimated, so it reads "~0.00… USD".
    const cost = page.locator('[data-turn="1"] [data-testid="turn-cost"]');
    await cost.waitFor();
    const shown = await cost.locator('summary').innerText();
    assert.match(shown, /^~0\.\d+ USD$/, 'a cost in dollars, marked estimated');
    assert.match(await cost.getAttribute('title'), /^This reply: 1 call · [\d,]+ tokens in · [\d,]+ out · estimated$/);
    await cost.locator('summary').click();
    await cost.locator('.turn-cost-details').waitFor();
    assert.match(await cost.locator('.turn-cost-details').innerText(), /1 call · [\d,]+ tokens in/);
    const total = page.getByTestId('conversation-cost');
    assert.equal(await total.innerText(), shown, 'one turn: the total is its cost');
    assert.match(await total.getAttribute('title'), /^This conversation so far: 1 call/);

    // The numbers are the server's: the usage API says the same.
    const usage = await page.evaluate(async () => {
      const id = location.pathname.split('/').pop();
      return (await fetch(`/api/conversations/${id}/usage`)).json();
    });
    assert.equal(usage.turns.length, 1);
    assert.equal(usage.total.costs[0].currency, 'USD');
    assert.ok(usage.total.costs[0].nanos > 0);
    assert.equal(usage.total.tokens.estimated, true);
    await page.screenshot({ path: join(shots, 'usage-turn-cost.png') });
    await page.locator('.portal-header').screenshot({ path: join(shots, 'usage-header-total.png') });
    for (const theme of ['dark', 'light']) {
      await page.emulateMedia({ colorScheme: theme });
      const violations = await axeScan(page);
      assert.deepEqual(violations, [], `no serious or critical violation in the ${theme} theme`);
    }

    // Past the quota: the message is refused with the sentence, and stays in the composer.
    await page.getByLabel('Message').fill('And the budget?');
    await page.getByLabel('Message').press('Enter');
    const alert = page.locator('.problem[role="alert"]');
    await alert.waitFor();
    assert.match(
      await alert.innerText(),
      /^You have used [\d,]+ tokens of your 100 tokens for today, so this message was not sent\. The limit resets at \d{4}-\d\d-\d\d 00:00 UTC; send it then, or ask an administrator to raise the limit\.$/,
    );
    assert.equal(await page.locator('.turn').count(), 1, 'no turn was opened');
    assert.equal(await page.getByLabel('Message').inputValue(), 'And the budget?', 'the message is kept');
    await page.screenshot({ path: join(shots, 'usage-quota-refused.png') });
    await page.setViewportSize({ width: 390, height: 800 });
    await page.reload();
    await cost.waitFor();
    await cost.locator('summary').click();
    await cost.scrollIntoViewIfNeeded();
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(wide <= 0, `no sideways scroll at 390 px with the cost open (${wide} px too wide)`);
    await page.screenshot({ path: join(shots, 'usage-turn-cost-390.png') });
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
});
