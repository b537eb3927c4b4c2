// An axe-core scan of the main states in the light and the dark theme finds no serious or
// critical violation (contrast included): a new chat's greeting, a reply with its tool card and
// actions, a turn waiting for approval, a stopped turn, the sign-in page, and a phone's drawer.
// The failed turn is scanned in failures.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortal, launchBrowser, scanBoth, usersConfig, people, fillSignIn } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

test('the main states pass an axe-core scan in both themes', { timeout: 180000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0']);
  let browser;
  const found = [];
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('greeting').waitFor();
    found.push(...await scanBoth(page, 'new chat'));

    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await status(page, 1, 'completed');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    await page.locator('[data-turn="1"] .tool-result summary').click();
    found.push(...await scanBoth(page, 'reply'));

    await page.getByLabel('Message').fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 2, 'paused');
    found.push(...await scanBoth(page, 'approval'));
    await page.getByTestId('cancel').click();
    await status(page, 2, 'cut_off');
    found.push(...await scanBoth(page, 'stopped'));

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Conversations' }).click();
    await page.locator('.sidebar.open').waitFor();
    found.push(...await scanBoth(page, 'phone drawer'));
  } finally {
    await browser?.close();
    portal.stop();
  }

  const { config, remove } = usersConfig();
  const users = await startPortal(['--config', config]);
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(users.url);
    await page.getByLabel('Password').waitFor();
    found.push(...await scanBoth(page, 'sign-in'));
    await fillSignIn(page, people.alice, 'wrong-password-1');
    await page.getByRole('alert').waitFor();
    found.push(...await scanBoth(page, 'sign-in refused'));
  } finally {
    await browser?.close();
    users.stop();
    remove();
  }
  assert.deepEqual(found, [], JSON.stringify(found, null, 1));
});
