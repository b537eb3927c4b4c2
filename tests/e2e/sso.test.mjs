// Single sign-on in Chromium against a real OpenID provider (the npm `oidc-provider` package,
// OpenID-certified), two of them on loopback for two organisations of one portal: signing in
// through the organisation's button, the first sign-in making the account, a person outside the
// required group refused with a page that says so, signing out at both ends, and an
// organisation with one provider and no passwords sent straight to it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots, axeScan } from './portal.mjs';
import { startProvider } from './oidc.mjs';

const secret = 'portal-e2e-client-secret';
let portal;
let providers;
let folder;
let browser;

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

before(async () => {
  const port = await freePort();
  const portalUrl = `http://127.0.0.1:${port}`;
  // Two providers on two loopback addresses, so that their cookies stay apart.
  providers = {
    acme: await startProvider({
      portalUrl,
      clientSecret: secret,
      accounts: {
        ada: { name: 'Ada Lovelace', email: 'ada@acme.example', email_verified: true, groups: ['portal'] },
        eve: { name: 'Eve Outsider', email: 'eve@acme.example', email_verified: true, groups: ['visitors'] },
      },
    }),
    globex: await startProvider({
      host: '127.0.0.2',
      portalUrl,
      clientSecret: secret,
      accounts: { gil: { name: 'Gil Globex', email: 'gil@globex.example', email_verified: true } },
    }),
  };
  folder = mkdtempSync(join(tmpdir(), 'portal-e2e-sso-'));
  const config = join(folder, 'config');
  for (const [id, passwords] of [['acme', true], ['globex', false]]) {
    mkdirSync(join(config, 'organisations', id), { recursive: true });
    writeFileSync(
      join(config, 'organisations', id, 'organisation.toml'),
      `name = "${id}"\n${passwords ? '' : 'passwords = false\n'}`,
    );
  }
  mkdirSync(join(config, 'providers'));
  writeFileSync(join(config, 'client.secret'), `${secret}\n`);
  const provider = (label, issuer, organisation, rules) => [
    `label = "${label}"`, `issuer = "${issuer}"`, 'client_id = "portal"',
    'client_secret_file = "client.secret"', 'scopes = ["email", "profile", "groups"]',
    `organisation = "${organisation}"`, 'sign_up = true', ...rules, '',
  ].join('\n');
  writeFileSync(
    join(config, 'providers', 'acme-id.toml'),
    provider('Acme ID', providers.acme.issuer, 'acme', ['required_claim = "groups"', 'required_value = "portal"']),
  );
  writeFileSync(
    join(config, 'providers', 'globex-id.toml'),
    provider('Globex ID', providers.globex.issuer, 'globex', []),
  );
  portal = await startPortal(['--demo-pace', '0.1', '--config', config, '--public-url', portalUrl], { port });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  portal?.stop();
  providers?.acme.stop();
  providers?.globex.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** Signs in at the provider's development pages as `login`, consenting when asked. */
async function atProvider(page, login) {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  if (await consent.isVisible({ timeout: 5000 }).catch(() => false)) {
    await consent.click();
  }
}

async function whoIsIn(page) {
  return page.evaluate(async () => {
    const answer = await fetch('/api/session');
    return answer.ok ? answer.json() : null;
  });
}

test('the first sign-in through the organisation\'s provider makes the account; signing out ends both sessions', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${portal.url}/?organisation=acme`);
  const button = page.getByRole('link', { name: 'Sign in with Acme ID' });
  await button.waitFor();
  assert.equal(await page.getByLabel('Password').isVisible(), true, 'acme keeps passwords');
  await page.screenshot({ path: join(shots, 'sso-sign-in-page.png') });
  assert.deepEqual(await axeScan(page), [], 'the sign-in page with its provider button');
  await button.click();
  await atProvider(page, 'ada');
  await page.getByTestId('person-name').waitFor();
  const who = await whoIsIn(page);
  assert.equal(who.organisation, 'acme');
  assert.match(who.user, /^ada-[0-9a-f]{6}$/);
  assert.equal(who.name, 'Ada Lovelace', 'the name the provider told');
  assert.equal(await page.getByTestId('person-name').innerText(), 'Ada Lovelace');
  await page.screenshot({ path: join(shots, 'sso-signed-in.png') });

  // Sign out: the portal's session ends, then the provider's (it asks to confirm), and the
  // browser comes back to the sign-in page.
  await page.getByRole('button', { name: 'Sign out' }).click();
  const confirm = page.getByRole('button', { name: /yes, sign me out/i });
  await confirm.waitFor();
  await page.screenshot({ path: join(shots, 'sso-provider-sign-out.png') });
  await confirm.click();
  await page.waitForURL(`${portal.url}/`);
  await page.getByRole('form', { name: 'Sign in to Portal' }).waitFor();
  assert.equal(await whoIsIn(page), null, 'signed out of the portal');

  // Signed out of the provider too: signing in again asks for the login, and finds the same
  // account.
  await page.goto(`${portal.url}/?organisation=acme`);
  await page.getByRole('link', { name: 'Sign in with Acme ID' }).click();
  await page.locator('input[name="login"]').waitFor();
  await atProvider(page, 'ada');
  await page.getByTestId('person-name').waitFor();
  assert.equal((await whoIsIn(page)).user, who.user, 'the same account');
  await context.close();
});

test('someone outside the required group is refused with a page that says so', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${portal.url}/?organisation=acme`);
  await page.getByRole('link', { name: 'Sign in with Acme ID' }).click();
  await atProvider(page, 'eve');
  const words = page.locator('#sso-error');
  await words.waitFor();
  assert.match(await words.innerText(), /not in the group allowed to use this portal/);
  await page.screenshot({ path: join(shots, 'sso-not-in-group.png') });
  assert.deepEqual(await axeScan(page), [], 'the refusal page');
  assert.equal(await whoIsIn(page), null, 'nobody signed in');
  await context.close();
});

test('an organisation with one provider and no passwords goes straight to it, on the same portal', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${portal.url}/?organisation=globex`);
  await page.waitForURL((url) => url.host === new URL(providers.globex.issuer).host);
  await atProvider(page, 'gil');
  await page.getByTestId('person-name').waitFor();
  const who = await whoIsIn(page);
  assert.equal(who.organisation, 'globex');
  assert.match(who.user, /^gil-[0-9a-f]{6}$/);
  await context.close();
});
