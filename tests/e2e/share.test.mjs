// Share links (docs/share.md): Alice shares a conversation with a tool call, an approval and a
// compaction from the header's Share, as a link for her organisation, and copies it. Bob, of her
// organisation, opens it in a browser of his own: the snapshot drawn read only (the reply by the
// drawer, the tool's card, the approval and the divider; no composer, no Edit or Regenerate), and
// continues it as his own conversation. Signed out, the link asks to sign in; Carol, of another
// organisation, signing in there is told the link does not exist, and her organisation, which
// allows no public links, offers none. Alice's organisation allows them: a public link shows the
// conversation to a signed-out browser until Alice revokes it, then the words for a link gone. A
// title and a reply holding markup stay text. Screenshots at 390, 1280 and 1920 px in both
// themes; axe-core finds nothing serious.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startPortal, launchBrowser, shots, usersConfig, people, signIn, fillSignIn, sendAndWait,
  conversationInUrl, scanBoth, shootWidths,
} from './portal.mjs';

const TITLE = 'Plan the <img src=x onerror=alert(1)> survey';
const GONE = 'This link does not exist, was revoked or has expired.';

/** Screenshots of the page in both themes, as `share-<name>-<theme>.png`. */
async function shootBoth(page, name) {
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: join(shots, `share-${name}-${theme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** A page in a browser context of its own (its own cookies), failing the test on any dialog a
 * script opens, such as an `alert(1)` run from a title or a reply. */
async function freshPage(browser, dialogs, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  return page;
}

/** The shared page's turns drawn: every block settled. */
const drawn = (page) => page.waitForFunction(() => document.querySelector('[data-turn="1"]')
  && !document.querySelector('.w, .block.live'), null, { timeout: 30000 });

test('a conversation shared for the organisation, continued, asked to sign in for, shared publicly and revoked', { timeout: 300000 }, async () => {
  const { config, remove } = usersConfig();
  const acme = join(config, 'organisations', 'acme');
  writeFileSync(join(acme, 'agents', 'assistant.toml'),
    'name = "Assistant"\nmodel = "demo"\ntools = ["count_characters", "publish_note", "ask_user"]\n');
  appendFileSync(join(acme, 'organisation.toml'), '\npublic_links = true\n');
  const portal = await startPortal(['--demo-pace', '0', '--config', config]);
  let browser;
  const found = [];
  const dialogs = [];
  try {
    browser = await launchBrowser();

    // Alice's conversation: a tool call on the markup-looking topic, an approved note, and a
    // compaction.
    const alice = await freshPage(browser, dialogs);
    await alice.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: portal.url });
    await signIn(alice, portal.url, people.alice);
    const opener = alice.getByRole('button', { name: 'Share' });
    assert.equal(await opener.isVisible(), false, 'no Share in a new chat');
    await sendAndWait(alice, TITLE);
    const original = conversationInUrl(alice);
    await alice.getByLabel('Message').fill('Please publish a note on the herons');
    await alice.getByLabel('Message').press('Enter');
    await alice.locator('[data-turn="2"][data-turn-status="paused"]').waitFor({ timeout: 30000 });
    await alice.getByTestId('approve').click();
    await alice.locator('[data-turn="2"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
    await sendAndWait(alice, '/compact');
    await alice.locator('[data-turn="3"] [data-testid="divider"]').waitFor();

    // Share opens a modal panel; the organisation is chosen, and public links are offered.
    await opener.click();
    const panel = alice.getByTestId('share');
    await panel.getByText('No links yet.').waitFor();
    assert.equal(await panel.evaluate((d) => d.open && d.matches(':modal')), true, 'a modal dialog');
    assert.equal(await panel.getByLabel('Your organisation, signed in').isChecked(), true);
    assert.equal(await panel.getByLabel('Anyone with the link').isEnabled(), true, 'acme allows public links');
    found.push(...await scanBoth(alice, 'panel'));
    await shootBoth(alice, 'panel');

    // A link for the organisation: its address whole, with Copy, and listed.
    await panel.getByRole('button', { name: 'Create link' }).click();
    const address = panel.getByTestId('share-url');
    await address.waitFor();
    const organisationLink = await address.inputValue();
    assert.match(organisationLink, new RegExp(`^${portal.url}/s/[^/]+$`));
    const copy = panel.locator('.keys-secret').getByRole('button', { name: 'Copy' });
    assert.equal(await copy.evaluate((b) => b === document.activeElement), true, 'Copy has the focus');
    await copy.click();
    await panel.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await alice.evaluate(() => navigator.clipboard.readText()), organisationLink);
    const listed = panel.locator('[data-testid="share-list"] > li[data-state="live"]');
    await listed.waitFor();
    assert.match(await listed.innerText(), /Your organisation\s+3 turns · made \d{1,2} [A-Z][a-z]{2} \d{4} · Never expires/);
    found.push(...await scanBoth(alice, 'panel made'));
    await shootBoth(alice, 'panel-made');
    await alice.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    assert.equal(await opener.evaluate((b) => b === document.activeElement), true, 'the focus is back on Share');

    // Bob, of the same organisation, reads it: the snapshot drawn as the conversation draws it,
    // read only, its title and reply as text.
    const bob = await freshPage(browser, dialogs);
    await signIn(bob, portal.url, people.bob);
    await bob.goto(organisationLink);
    await bob.getByTestId('shared-title').waitFor();
    await drawn(bob);
    assert.equal(await bob.getByTestId('shared-title').innerText(), TITLE);
    assert.equal(await bob.title(), `${TITLE} · Portal`);
    assert.match(await bob.getByTestId('shared-line').innerText(),
      /^Shared by Alice Example · 3 turns · a snapshot from \d{1,2} [A-Z][a-z]{2} \d{4}$/);
    const reply = bob.locator('[data-turn="1"] .block.answer');
    assert.match(await reply.innerText(), /Here is a short tour of “Plan the <img src=x onerror=alert\(1\)> survey”/);
    assert.ok(await reply.locator('p').count() > 1, 'the reply is drawn from its markdown');
    const card = bob.locator('[data-turn="1"] [data-testid="tool-card"]');
    assert.equal(await card.locator('.tool-name').innerText(), 'count_characters');
    assert.match(await card.locator('.tool-summary').innerText(), /Plan the <img src=x onerror=alert\(1\)> survey/);
    assert.equal(await bob.locator('[data-turn="2"] .approval-state').innerText(), 'Approved');
    await bob.locator('[data-turn="3"] [data-testid="divider"]').waitFor();
    assert.equal(await bob.getByTestId('thinking').count(), 0, 'no thinking in a snapshot');
    for (const control of ['edit', 'regenerate', 'inspect', 'retry', 'approve']) {
      assert.equal(await bob.getByTestId(control).count(), 0, `no ${control} on a shared page`);
    }
    assert.equal(await bob.getByLabel('Message').count(), 0, 'no composer');
    assert.equal(await bob.locator('main img').count(), 0, 'markup stays text');
    found.push(...await scanBoth(bob, 'shared page'));
    await shootWidths(bob, 'share-page');

    // Continue: Bob's own copy opens at its own address.
    await bob.getByRole('button', { name: 'Continue this conversation' }).click();
    await bob.waitForURL(/\/c\//);
    const copied = conversationInUrl(bob);
    assert.notEqual(copied, original);
    await bob.locator('[data-turn="1"] .block.answer').waitFor();
    await bob.getByLabel('Message').waitFor();
    assert.match(await bob.locator('[data-turn="1"] .message.user').innerText(), /Plan the <img src=x onerror=alert\(1\)> survey/);

    // Signed out, the link asks to sign in, and comes back to it; Carol, of another
    // organisation, is told it does not exist.
    const visitor = await freshPage(browser, dialogs);
    await visitor.goto(organisationLink);
    await visitor.getByText('Sign in to see this conversation.').waitFor();
    assert.equal(await visitor.getByRole('form', { name: 'Sign in to Portal' }).count(), 1);
    assert.equal(await visitor.locator('[data-turn]').count(), 0, 'nothing of the conversation');
    found.push(...await scanBoth(visitor, 'sign in'));
    await shootBoth(visitor, 'sign-in');
    await fillSignIn(visitor, people.carol);
    await visitor.getByText(GONE).waitFor();
    assert.equal(new URL(visitor.url()).pathname, new URL(organisationLink).pathname, 'still at the link');
    assert.equal(await visitor.locator('[data-turn]').count(), 0);

    // Carol's organisation allows no public links: the choice is there, disabled, and says why.
    await visitor.goto(portal.url);
    await sendAndWait(visitor, 'Tell me about writing systems');
    await visitor.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    await visitor.getByRole('button', { name: 'Share' }).click();
    const carols = visitor.getByTestId('share');
    await carols.getByText('No links yet.').waitFor();
    const anyone = carols.getByLabel('Anyone with the link');
    assert.equal(await anyone.isDisabled(), true);
    assert.match(await carols.locator('#share-public-note').innerText(), /does not allow links for anyone/);
    await shootBoth(visitor, 'panel-no-public');

    // A public link, for 7 days: a signed-out browser reads the conversation, and cannot continue it.
    await opener.click();
    await panel.getByLabel('Anyone with the link').check();
    await panel.getByLabel('Expires').selectOption({ label: 'In 7 days' });
    await panel.getByRole('button', { name: 'Create link' }).click();
    await panel.locator('[data-testid="share-list"] > li[data-state="live"]').nth(1).waitFor();
    const publicLink = await address.inputValue();
    assert.notEqual(publicLink, organisationLink);
    // The link is found by its address, then followed by its id: revoked, its address is not shown.
    const made = panel.locator('[data-testid="share-list"] > li', { hasText: publicLink });
    const item = panel.locator(`[data-testid="share-list"] > li[data-link="${await made.getAttribute('data-link')}"]`);
    assert.match(await item.innerText(), /Anyone with the link\s+3 turns · made .+ · Expires \d{1,2} [A-Z][a-z]{2} \d{4}/);
    const stranger = await freshPage(browser, dialogs, { width: 390, height: 844 });
    await stranger.goto(publicLink);
    await stranger.getByTestId('shared-title').waitFor();
    await drawn(stranger);
    assert.equal(await stranger.getByTestId('shared-title').innerText(), TITLE);
    await stranger.locator('[data-turn="1"] [data-testid="tool-card"]').waitFor();
    assert.equal(await stranger.getByRole('button', { name: 'Continue this conversation' }).count(), 0,
      'nobody signed in continues nothing');
    const overflow = await stranger.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scroll at 390 px (${overflow} px too wide)`);
    found.push(...await scanBoth(stranger, 'public'));
    await shootWidths(stranger, 'share-public');

    // Revoked, it is listed so and answers as a link that does not exist.
    await item.getByRole('button', { name: 'Revoke' }).click();
    await panel.locator('[data-testid="share-list"] > li[data-state="revoked"]').waitFor();
    assert.match(await item.innerText(), /^Anyone with the link\s+Revoked\s+3 turns · made .+ · Revoked \d{1,2} [A-Z][a-z]{2} \d{4}$/);
    assert.equal(await item.getByRole('button', { name: 'Revoke' }).count(), 0, 'a revoked link has no Revoke');
    assert.equal(await panel.getByTestId('share-url').isVisible(), false, 'a revoked link is no longer offered to copy');
    await shootBoth(alice, 'panel-revoked');
    await stranger.reload();
    await stranger.getByText(GONE).waitFor();
    assert.equal(await stranger.locator('[data-turn]').count(), 0);
    found.push(...await scanBoth(stranger, 'gone'));
    await shootBoth(stranger, 'gone');

    assert.deepEqual(dialogs, [], 'no script ran from a title or a reply');
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
  assert.deepEqual(found, [], JSON.stringify(found, null, 1));
});
