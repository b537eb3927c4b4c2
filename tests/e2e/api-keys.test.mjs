// API keys (issue 46, docs/api.md): a signed-in person opens API keys from the header, makes a key
// for one of their two agents that expires in 30 days, and sees its secret once, with Copy; the
// secret works on the OpenAI-compatible API and lists that agent only. A refusal is shown in the
// server's words. Closed and opened again, the panel lists the key without its secret; revoked
// after a confirmation, the key stays listed as revoked and the secret is refused. Screenshots at
// 1280 and 390 px in both themes; axe-core finds nothing serious in the open panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots, usersConfig, people, signIn, scanBoth } from './portal.mjs';

const models = (url, secret) =>
  fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${secret}` } });

/** Screenshots of the page in both themes, as `keys-<name>-<theme>.png`. */
async function shootBoth(page, name) {
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: join(shots, `keys-${name}-${theme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('a person makes a key for one agent, sees its secret once, and revokes it; the API follows', { timeout: 180000 }, async () => {
  const { config, remove } = usersConfig();
  writeFileSync(
    join(config, 'organisations', 'acme', 'agents', 'writer.toml'),
    'name = "Writer"\nmodel = "demo"\n',
  );
  const portal = await startPortal(['--demo-pace', '0', '--config', config]);
  let browser;
  const found = [];
  try {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: portal.url });
    const page = await context.newPage();
    await signIn(page, portal.url, people.alice);

    // The header's key, beside the person's name, cuts no name short.
    const cut = await page.evaluate(() => [...document.querySelectorAll('.portal-header :is(.agent-label, .model-label, .person-name)')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
    assert.deepEqual(cut, [], 'no name cut at 1280 px');

    // It opens the panel as a modal dialog, the cursor in the name field.
    const opener = page.getByRole('button', { name: 'API keys' });
    await opener.click();
    const panel = page.getByTestId('keys');
    await panel.getByText('No keys yet.').waitFor();
    assert.equal(await panel.evaluate((d) => d.open && d.matches(':modal')), true, 'a modal dialog');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-name', 'the name field has the focus');
    await panel.getByLabel('Writer').waitFor();
    found.push(...await scanBoth(page, 'no keys'));

    // A refusal is shown in the server's words, next to the form.
    await panel.getByLabel('Name').fill('   ');
    await panel.getByRole('button', { name: 'Make key' }).click();
    const problem = panel.locator('.keys-form [role="alert"]');
    await problem.getByText(/name/).waitFor();
    assert.match(await problem.innerText(), /name/, 'the sentence says what was wrong');
    await shootBoth(page, 'refused');
    found.push(...await scanBoth(page, 'refused'));

    // A key for Writer alone, for 30 days.
    await panel.getByLabel('Name').fill('ci script');
    await panel.getByLabel('Writer').check();
    await panel.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    await panel.getByRole('button', { name: 'Make key' }).click();
    const shown = panel.getByTestId('keys-secret');
    await shown.waitFor();
    const secret = await shown.innerText();
    assert.match(secret, /^psk_[A-Za-z0-9_-]{43}$/);
    assert.equal(await problem.innerText(), '', 'the refusal is gone');
    assert.match(await panel.locator('.keys-secret').innerText(), /will not be shown again/);
    const copy = panel.locator('.keys-secret').getByRole('button', { name: 'Copy' });
    assert.equal(await copy.evaluate((b) => b === document.activeElement), true, 'Copy has the focus');
    await copy.click();
    await panel.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'Copy copies the secret');
    assert.equal(await panel.getByLabel('Name').inputValue(), '', 'the form is cleared for the next key');

    const item = panel.locator('.keys-list > li', { hasText: 'ci script' });
    await item.waitFor();
    const line = await item.innerText();
    assert.ok(line.includes(`${secret.slice(0, 10)}…`), `the key's hint: ${line}`);
    assert.match(line, /Writer · made .+ · Expires \d{1,2} [A-Z][a-z]{2} \d{4}/);
    const expires = await item.locator('time').nth(1).getAttribute('datetime');
    const days = (Date.parse(expires) - Date.now()) / 86400000;
    assert.ok(days > 29.9 && days <= 30, `it expires in 30 days (${days})`);
    await shootBoth(page, 'made');
    found.push(...await scanBoth(page, 'made'));

    // The secret works on the API, for Writer only.
    const answer = await models(portal.url, secret);
    assert.equal(answer.status, 200);
    assert.deepEqual((await answer.json()).data.map((m) => m.id), ['writer']);

    // Esc closes the panel and focus goes back to the button; opened again, the key is listed
    // and its secret is nowhere.
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    assert.equal(await opener.evaluate((b) => b === document.activeElement), true, 'focus is back on API keys');
    await opener.click();
    await item.waitFor();
    assert.equal(await panel.getByTestId('keys-secret').count(), 0, 'no secret shown again');
    assert.ok(!(await panel.innerText()).includes(secret), 'the secret is not in the panel');
    assert.ok(!(await page.content()).includes(secret), 'nor anywhere in the page');

    // Revoke asks first; Esc closes the question alone, and nothing is revoked.
    await item.getByRole('button', { name: 'Revoke “ci script”' }).click();
    const question = page.getByTestId('revoke-dialog');
    await question.waitFor();
    assert.match(await question.innerText(), /Revoke “ci script”\?/);
    await shootBoth(page, 'revoke');
    found.push(...await scanBoth(page, 'revoke question'));
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    assert.equal(await panel.isVisible(), true, 'the panel stays open');
    assert.equal(await item.getAttribute('data-state'), 'live');
    await item.getByRole('button', { name: 'Revoke “ci script”' }).click();
    await question.getByRole('button', { name: 'Revoke' }).click();
    await question.waitFor({ state: 'detached' });
    await panel.locator('.keys-list > li[data-state="revoked"]', { hasText: 'ci script' }).waitFor();
    assert.match(await item.innerText(), /Revoked/);
    assert.equal(await item.getByRole('button', { name: /Revoke/ }).count(), 0, 'a revoked key has no Revoke');
    assert.match(await panel.getByRole('status').innerText(), /“ci script” is revoked/);
    assert.equal((await models(portal.url, secret)).status, 401, 'the revoked secret is refused');

    // A phone: another key, for every agent and never expiring; nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await panel.getByLabel('Name').fill('nightly report');
    await panel.getByLabel('Expires').selectOption({ label: 'Never' });
    await panel.getByRole('button', { name: 'Make key' }).click();
    await shown.waitFor();
    const every = await shown.innerText();
    const nightly = panel.locator('.keys-list > li', { hasText: 'nightly report' });
    await nightly.waitFor();
    assert.match(await nightly.innerText(), /All agents · made .+ · Never expires/);
    const wide = await panel.evaluate((d) => d.scrollWidth - d.clientWidth);
    assert.ok(wide <= 0, `no sideways scroll in the panel at 390 px (${wide} px too wide)`);
    await panel.evaluate((d) => { d.scrollTop = 0; });
    await shootBoth(page, 'made-390');
    await panel.evaluate((d) => { d.scrollTop = d.scrollHeight; });
    await shootBoth(page, 'list-390');
    found.push(...await scanBoth(page, 'phone'));
    const listed = await models(portal.url, every);
    assert.deepEqual((await listed.json()).data.map((m) => m.id).sort(), ['assistant', 'writer']);

    // The header on a phone, with the key button among its buttons.
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scroll at 390 px (${overflow} px too wide)`);
    await shootBoth(page, 'header-390');
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
  assert.deepEqual(found, [], JSON.stringify(found, null, 1));
});
