// The conversation list in users mode: the sidebar lists a person's conversations newest first
// with a mark while one answers, pages with Show more, searches, renames in place and deletes
// after a confirmation; New chat (button and Ctrl+Shift+O); Back and Forward between
// conversations; an unknown address; another person sees none of it; the drawer at 360 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  startPortal, launchBrowser, shots, usersConfig, people, signIn, sendAndWait, conversationInUrl,
} from './portal.mjs';

let portal;
let browser;
let config;

before(async () => {
  config = usersConfig();
  portal = await startPortal(['--demo-pace', '0.15', '--config', config.config]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  portal?.stop();
  config?.remove();
});

/** A fresh browser context of `width` × 800 with `person` signed in at `path`. */
async function signedIn(person, { width = 1280, path = '/' } = {}) {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  await signIn(page, portal.url, person, path);
  return { context, page };
}

const sidebar = (page) => page.getByRole('navigation', { name: 'Conversations' });
const items = (page) => sidebar(page).getByTestId('conversation');
const titles = (page) => items(page).locator('.title').allInnerTexts();

/** Waits until the sidebar's titles are `wanted`, in order. */
async function listed(page, wanted) {
  await page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('nav [data-testid="conversation"] .title')]
      .map((t) => t.textContent)) === JSON.stringify(want),
    wanted,
    { timeout: 15000 },
  ).catch(async () => assert.deepEqual(await titles(page), wanted));
}

const launch = 'Plan the launch of the heron app';
const budget = 'Budget for the Lisbon office';
const notes = 'Notes from the lake survey';

test("the sidebar lists alice's conversations, searches, renames and deletes them", async () => {
  const { context, page } = await signedIn(people.alice);
  try {
    await sidebar(page).waitFor();
    await sidebar(page).getByText('No conversations yet.').waitFor();

    // Each first message adds its conversation on top, titled by its opening words, marked
    // while it answers, and the open one is the current page.
    for (const text of [launch, budget, notes]) {
      await page.getByRole('button', { name: 'New chat' }).click();
      await page.getByLabel('Message').fill(text);
      await page.getByLabel('Message').press('Enter');
      const item = items(page).first();
      await item.locator('.title', { hasText: text.split(' ')[0] }).waitFor();
      if (text === notes) {
        await item.getByRole('img', { name: 'answering' }).waitFor();
        await page.screenshot({ path: join(shots, 'sidebar-answering.png') });
      }
      await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    }
    await listed(page, [notes, budget, launch]);
    await sidebar(page).getByRole('img', { name: 'answering' }).waitFor({ state: 'detached' });
    const current = sidebar(page).locator('[aria-current="page"]');
    assert.equal(await current.count(), 1);
    assert.equal(await current.locator('.title').innerText(), notes);
    assert.equal(await current.getAttribute('href'), `/c/${conversationInUrl(page)}`);
    assert.deepEqual(await items(page).locator('time').allInnerTexts(), ['just now', 'just now', 'just now']);
    await page.screenshot({ path: join(shots, 'sidebar.png') });

    // Search, by title and by what was said.
    const search = page.getByLabel('Search conversations');
    await search.fill('lisbon');
    await listed(page, [budget]);
    await page.screenshot({ path: join(shots, 'sidebar-search.png') });
    await search.fill('LAKE');
    await listed(page, [notes]);
    await search.fill('no such words anywhere');
    await listed(page, []);
    await sidebar(page).getByText('No conversation mentions').waitFor();
    await search.fill('');
    await listed(page, [notes, budget, launch]);

    // Rename in place: Esc keeps the old title, Enter saves the new one.
    const launchItem = items(page).filter({ hasText: launch });
    await launchItem.hover();
    await launchItem.getByRole('button', { name: `Rename ${launch}` }).click();
    const title = page.getByLabel('Conversation title');
    assert.equal(await title.inputValue(), launch);
    await title.fill('Something else');
    await title.press('Escape');
    await listed(page, [notes, budget, launch]);
    await launchItem.hover();
    await launchItem.getByRole('button', { name: `Rename ${launch}` }).click();
    await title.fill('Heron app launch');
    await page.screenshot({ path: join(shots, 'sidebar-rename.png') });
    await title.press('Enter');
    await listed(page, [notes, budget, 'Heron app launch']);
    await page.reload();
    await listed(page, [notes, budget, 'Heron app launch']);

    // Delete, after a dialog naming the conversation; Cancel keeps it.
    const budgetItem = items(page).filter({ hasText: budget });
    await budgetItem.locator('a').click();
    await page.locator('[data-turn="1"] .message.user p', { hasText: budget }).waitFor();
    const budgetId = conversationInUrl(page);
    await budgetItem.getByRole('button', { name: `Delete ${budget}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), new RegExp(`Delete “${budget}”\\?`));
    assert.match(await dialog.innerText(), /cannot be undone/);
    await page.screenshot({ path: join(shots, 'delete-confirm.png') });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await listed(page, [notes, budget, 'Heron app launch']);
    await budgetItem.getByRole('button', { name: `Delete ${budget}` }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    await listed(page, [notes, 'Heron app launch']);
    // The open conversation was deleted: a new chat.
    assert.equal(new URL(page.url()).pathname, '/');
    assert.equal(await page.locator('.turn').count(), 0);
    const gone = await page.evaluate(async (id) => (await fetch(`/api/conversations/${id}`)).status, budgetId);
    assert.equal(gone, 404);
  } finally {
    await context.close();
  }
});

test('the list comes a page at a time', async () => {
  const { context, page } = await signedIn(people.carol);
  try {
    // 55 conversations with no message yet: each is listed as "New chat".
    await page.evaluate(async () => {
      for (let n = 0; n < 55; n += 1) {
        const response = await fetch('/api/conversations', { method: 'POST' });
        if (!response.ok) throw new Error(`creating conversation ${n}: ${response.status}`);
      }
    });
    await page.reload();
    const more = sidebar(page).getByRole('button', { name: 'Show more' });
    await more.waitFor();
    assert.equal(await items(page).count(), 50);
    assert.deepEqual([...new Set(await titles(page))], ['New chat']);
    await more.click();
    await more.waitFor({ state: 'detached' });
    assert.equal(await items(page).count(), 55);
  } finally {
    await context.close();
  }
});

test('New chat (button and Ctrl+Shift+O), Back and Forward, and old #id links', async () => {
  const { context, page } = await signedIn(people.bob);
  try {
    await sendAndWait(page, 'First conversation about kites');
    const first = conversationInUrl(page);
    await page.getByRole('button', { name: 'New chat' }).click();
    assert.equal(new URL(page.url()).pathname, '/');
    assert.equal(await page.locator('.turn').count(), 0);
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');
    await sendAndWait(page, 'Second conversation about boats');
    const second = conversationInUrl(page);
    assert.notEqual(first, second);

    // The shortcut, named in the button's tooltip.
    assert.match(await page.getByRole('button', { name: 'New chat' }).getAttribute('title'), /Ctrl\+Shift\+O/);
    await page.getByLabel('Message').fill('a draft for the second');
    await page.keyboard.press('Control+Shift+O');
    await page.waitForURL((url) => url.pathname === '/');
    assert.equal(await page.locator('.turn').count(), 0);
    assert.equal(await page.getByLabel('Message').inputValue(), '', 'a new chat has its own draft');
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message');

    // Back and Forward open what the address names, without a reload.
    await page.evaluate(() => { window.notReloaded = true; });
    const userText = page.locator('[data-turn="1"] .message.user p');
    await page.goBack();
    await userText.filter({ hasText: 'boats' }).waitFor();
    assert.equal(conversationInUrl(page), second);
    assert.equal(await page.getByLabel('Message').inputValue(), 'a draft for the second', 'its draft is kept');
    await page.goBack();
    await userText.filter({ hasText: 'kites' }).waitFor();
    assert.equal(conversationInUrl(page), first);
    assert.equal(await page.locator('.turn').count(), 1);
    await page.goForward();
    await userText.filter({ hasText: 'boats' }).waitFor();
    await page.goForward();
    await page.waitForURL((url) => url.pathname === '/');
    assert.equal(await page.locator('.turn').count(), 0);
    await page.goBack();
    await userText.filter({ hasText: 'boats' }).waitFor();
    assert.equal(await page.evaluate(() => window.notReloaded), true, 'no reload');
    // The sidebar follows: the open conversation is the current page.
    const current = sidebar(page).locator('[aria-current="page"]');
    await current.filter({ hasText: 'boats' }).waitFor();

    // Opening one from the sidebar adds it to the history.
    await items(page).filter({ hasText: 'kites' }).locator('a').click();
    await userText.filter({ hasText: 'kites' }).waitFor();
    assert.equal(conversationInUrl(page), first);
    await page.goBack();
    await userText.filter({ hasText: 'boats' }).waitFor();

    // An old #id link opens the conversation at its address.
    await page.goto(`${portal.url}/#${first}`);
    await userText.filter({ hasText: 'kites' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/c/${first}`);
    assert.equal(new URL(page.url()).hash, '');
  } finally {
    await context.close();
  }
});

test("an unknown conversation shows a friendly page; bob and carol never see alice's", async () => {
  const alice = await signedIn(people.alice);
  const bob = await signedIn(people.bob, { path: '/c/c-never-was' });
  try {
    const gone = bob.page.getByTestId('unknown-conversation');
    await gone.waitFor();
    assert.equal(await gone.getByRole('heading').innerText(), 'This conversation was deleted or never existed');
    assert.equal(await bob.page.getByLabel('Message').count(), 0, 'no composer for nothing');
    await bob.page.screenshot({ path: join(shots, 'unknown-conversation.png') });
    await gone.getByRole('button', { name: 'New chat' }).click();
    await bob.page.getByLabel('Message').waitFor();
    assert.equal(new URL(bob.page.url()).pathname, '/');

    // Alice's conversation, by its address, for bob (same organisation) and carol (another).
    await items(alice.page).first().waitFor();
    await items(alice.page).first().locator('a').click();
    await alice.page.locator('[data-turn="1"]').waitFor();
    const hers = conversationInUrl(alice.page);
    const bobTitles = await titles(bob.page);
    assert.ok(!bobTitles.includes(notes), `bob's list holds none of alice's: ${bobTitles}`);
    await bob.page.goto(`${portal.url}/c/${hers}`);
    await gone.waitFor();
    assert.equal(await bob.page.locator('.turn').count(), 0);
    const carol = await signedIn(people.carol, { path: `/c/${hers}` });
    await carol.page.getByTestId('unknown-conversation').waitFor();
    assert.ok(!(await titles(carol.page)).includes(notes));
    await carol.context.close();
  } finally {
    await alice.context.close();
    await bob.context.close();
  }
});

test('on a 360 px screen the list is a drawer', async () => {
  const { context, page } = await signedIn(people.alice, { width: 360 });
  try {
    const open = page.getByRole('button', { name: 'Conversations' });
    await open.waitFor();
    assert.equal(await sidebar(page).isVisible(), false, 'closed at first');
    assert.equal(await open.getAttribute('aria-expanded'), 'false');
    await page.screenshot({ path: join(shots, 'drawer-closed-360.png') });

    await open.click();
    await sidebar(page).waitFor({ state: 'visible' });
    assert.equal(await open.getAttribute('aria-expanded'), 'true');
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(shots, 'drawer-360.png') });
    await page.keyboard.press('Escape');
    await sidebar(page).waitFor({ state: 'hidden' });
    assert.equal(await open.evaluate((e) => e === document.activeElement), true, 'the focus goes back');

    // A click beside the drawer closes it; choosing a conversation opens it and closes it.
    await open.click();
    await sidebar(page).waitFor({ state: 'visible' });
    await page.mouse.click(345, 400);
    await sidebar(page).waitFor({ state: 'hidden' });
    await open.click();
    await items(page).first().locator('a').click();
    await sidebar(page).waitFor({ state: 'hidden' });
    await page.locator('[data-turn="1"]').waitFor();
    await page.screenshot({ path: join(shots, 'conversation-360.png') });
  } finally {
    await context.close();
  }
});

test('leaving a conversation while it answers stops drawing it; coming back follows it to its end', async () => {
  const slow = await startPortal(['--demo-pace', '2', '--config', config.config]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await signIn(page, slow.url, people.alice);
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.getByLabel('Message').press('Enter');
    await page.locator('[data-turn="1"][data-turn-status="running"] .block').first().waitFor({ timeout: 15000 });
    const id = conversationInUrl(page);

    // A new chat while it answers: nothing of it is drawn there, and the list marks it.
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    await items(page).filter({ hasText: 'writing systems' }).getByRole('img', { name: 'answering' }).waitFor();
    await page.waitForTimeout(1500);
    assert.equal(await page.locator('.turn').count(), 0, 'the left conversation streams nowhere');

    // Back to it: still answering, it is followed again and ends with its whole answer.
    await page.goBack();
    assert.equal(conversationInUrl(page), id);
    const turn = page.locator('[data-turn="1"]');
    assert.equal(await turn.getAttribute('data-turn-status'), 'running', 'still answering when opened again');
    await page.locator('[data-turn="1"][data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 120000 });
    const answer = await turn.locator('.block.answer .body').innerText();
    assert.ok(answer.includes('日本語'), 'the whole answer is drawn');
    assert.equal(await page.locator('.turn').count(), 1);
    await items(page).filter({ hasText: 'writing systems' }).getByRole('img', { name: 'answering' }).waitFor({ state: 'detached' });
  } finally {
    await context.close();
    slow.stop();
  }
});
