// Signing in and out in users mode: the sign-in page, a wrong password and the wait after too many,
// Sign out, a reload that stays signed in, and a session that ends under the person: they are back
// on the sign-in page with their draft kept, and signing in again brings back the conversation and
// the draft.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  startPortal, launchBrowser, shots, usersConfig, people, fillSignIn, signIn, sendAndWait,
  conversationInUrl, axeScan,
} from './portal.mjs';

const alice = people.alice;

async function withPortal(args, body) {
  const { config, remove } = usersConfig();
  const portal = await startPortal(['--demo-pace', '0.1', '--config', config, ...args]);
  let browser;
  try {
    browser = await launchBrowser();
    await body(portal, browser);
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
}

test('sign in: a wrong password says so, the right one opens the portal; a reload stays in; Sign out', async () => {
  await withPortal([], async (portal, browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(portal.url);
    const form = page.getByRole('form', { name: 'Sign in to Portal' });
    await form.waitFor();
    for (const label of ['Organisation', 'User', 'Password']) {
      assert.equal(await page.getByLabel(label, { exact: true }).count(), 1, `a field labelled ${label}`);
    }
    assert.equal(await page.getByLabel('Organisation').evaluate((e) => e === document.activeElement), true,
      'the first field has the focus');
    assert.equal(await page.getByLabel('Message').count(), 0, 'no portal before signing in');
    await page.screenshot({ path: join(shots, 'sign-in-page.png') });
    await page.setViewportSize({ width: 360, height: 740 });
    await page.screenshot({ path: join(shots, 'sign-in-360.png') });
    await page.setViewportSize({ width: 1280, height: 800 });

    // A wrong password: the server's words, the password selected to type again.
    await fillSignIn(page, alice, 'not-the-password');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /organisation, user or password is wrong/);
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isEnabled(), true);
    await page.screenshot({ path: join(shots, 'sign-in-wrong-password.png') });

    // The button is disabled while the sign-in is on its way.
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    await page.route('**/api/session', async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    await fillSignIn(page, alice);
    const busy = page.getByRole('button', { name: 'Signing in…' });
    await busy.waitFor();
    assert.equal(await busy.isDisabled(), true, 'no second sign-in while one is on its way');
    release();

    await page.getByTestId('person-name').waitFor();
    assert.equal(await page.getByTestId('person-name').innerText(), 'Alice Example');
    await page.getByLabel('Message').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Sign in to Portal' }).count(), 0);
    await page.screenshot({ path: join(shots, 'signed-in.png') });

    // A reload keeps the session (the cookie).
    await page.reload();
    await page.getByTestId('person-name').waitFor();
    assert.equal(await page.getByLabel('Password').count(), 0, 'no sign-in page after a reload');

    // Sign out: back to the sign-in page, and the session is gone for the server too.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await form.waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    const status = await page.evaluate(async () => (await fetch('/api/session')).status);
    assert.equal(status, 401);
    await page.reload();
    await form.waitFor();
  });
});

test('the sixth quick wrong password is refused with the time to wait', async () => {
  await withPortal([], async (portal, browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(portal.url);
    const attempt = async (password) => {
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      const answered = page.waitForResponse((r) => r.url().endsWith('/api/session') && r.request().method() === 'POST');
      await fillSignIn(page, alice, password);
      return (await answered).status();
    };
    for (let n = 1; n <= 5; n += 1) {
      assert.equal(await attempt(`wrong-${n}`), 401, `attempt ${n} is only wrong`);
    }
    assert.equal(await attempt('wrong-6'), 429);
    const alert = page.getByRole('alert').filter({ hasText: 'too many' });
    await alert.waitFor();
    assert.match(await alert.innerText(), /too many failed sign-ins; try again in \d+ seconds?/);
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isEnabled(), true);
    await page.screenshot({ path: join(shots, 'sign-in-rate-limited.png') });
  });
});

test('a session that ends returns to the sign-in page with the draft kept; signing in again restores it', async () => {
  await withPortal([], async (portal, browser) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, portal.url, alice);
    await sendAndWait(page, 'Plan the heron survey');
    const id = conversationInUrl(page);
    assert.ok(id, 'the conversation has its address');
    const draft = 'Half a thought about the herons';
    await page.getByLabel('Message').fill(draft);

    // The session is revoked on the server (signed out elsewhere) while the tab still holds
    // its cookie.
    const [cookie] = await context.cookies();
    assert.ok(cookie, 'the session is a cookie');
    assert.equal(cookie.httpOnly, true);
    const other = await context.newPage();
    await other.goto(portal.url);
    await other.getByTestId('person-name').waitFor();
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByLabel('Password').waitFor();
    await other.close();
    await context.addCookies([cookie]);

    // The next call answers 401: the sign-in page, saying why, with the person filled in.
    await page.getByLabel('Message').press('Enter');
    await page.getByLabel('Password').waitFor();
    assert.match(await page.getByRole('status').innerText(), /session ended.*draft is kept/i);
    assert.equal(await page.getByLabel('Organisation').inputValue(), 'acme');
    assert.equal(await page.getByLabel('User', { exact: true }).inputValue(), 'alice');
    assert.equal(conversationInUrl(page), id, 'the address still names the conversation');
    await page.screenshot({ path: join(shots, 'session-ended.png') });

    // A reload on the sign-in page keeps the draft too (sessionStorage).
    await page.reload();
    await fillSignIn(page, alice);
    await page.getByTestId('person-name').waitFor();
    assert.equal(conversationInUrl(page), id);
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor();
    assert.equal(await page.locator('[data-turn="1"] .message.user p').innerText(), 'Plan the heron survey');
    assert.equal(await page.getByLabel('Message').inputValue(), draft, 'the draft is back');
    assert.equal(await page.locator('.turn').count(), 1, 'the refused message was not sent');
    await page.screenshot({ path: join(shots, 'session-restored.png') });

    // The same without a reload: the cookie is gone, the next call is refused.
    await context.clearCookies();
    await page.getByLabel('Message').fill(`${draft}, again`);
    await page.getByLabel('Message').press('Enter');
    await page.getByLabel('Password').waitFor();
    await page.getByLabel('Password').fill(alice.password);
    await page.getByLabel('Password').press('Enter');
    await page.getByTestId('person-name').waitFor();
    assert.equal(conversationInUrl(page), id);
    assert.equal(await page.getByLabel('Message').inputValue(), `${draft}, again`);
    await context.close();
  });
});

test('a session that expires while the person is away returns to the sign-in page with the draft kept', async () => {
  await withPortal(['--session-lifetime', '3s'], async (portal, browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, portal.url, alice);
    const draft = 'A new chat, started before a long lunch';
    await page.getByLabel('Message').fill(draft);
    await page.waitForTimeout(4000);
    await page.getByLabel('Message').press('Enter');
    await page.getByLabel('Password').waitFor();
    assert.match(await page.getByRole('status').innerText(), /session ended/i);
    await page.getByLabel('Password').fill(alice.password);
    await page.getByLabel('Password').press('Enter');
    await page.getByTestId('person-name').waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    assert.equal(await page.getByLabel('Message').inputValue(), draft);
    assert.equal(await page.locator('.turn').count(), 0, 'nothing was sent');
  });
});

test('a portal of one organisation fills it in and asks only for the user and password; one of several says what to type', async () => {
  // The usual configuration has two organisations: the field is shown, with what to type.
  await withPortal([], async (portal, browser) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(portal.url);
    await page.getByLabel('Organisation').waitFor();
    await page.getByText("Type your organisation's id").waitFor();
    assert.equal(await page.getByLabel('Organisation').isVisible(), true);
    await page.close();
  });
  const { config, remove } = usersConfig();
  rmSync(join(config, 'organisations', 'globex'), { recursive: true, force: true });
  const portal = await startPortal(['--demo-pace', '0.1', '--config', config]);
  let browser;
  try {
    browser = await launchBrowser();
    for (const [width, theme] of [[1280, 'light'], [390, 'dark'], [1920, 'dark'], [390, 'light']]) {
      const page = await browser.newPage({ viewport: { width, height: 800 }, colorScheme: theme });
      await page.goto(portal.url);
      const user = page.getByLabel('User', { exact: true });
      await page.waitForFunction(() => document.activeElement?.id === 'sign-in-user');
      assert.equal(await page.locator('#sign-in-organisation').isVisible(), false, 'no organisation field to fill');
      assert.equal(await page.locator('#sign-in-organisation').inputValue(), 'acme');
      await page.screenshot({ path: join(shots, `sign-in-one-organisation-${width}-${theme}.png`) });
      if (width === 1280) {
        assert.deepEqual(await axeScan(page), []);
        await user.fill(alice.user);
        await page.getByLabel('Password').fill(alice.password);
        await page.getByLabel('Password').press('Enter');
        await page.getByTestId('person-name').waitFor();
      }
      await page.close();
    }
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
});
