// Export and import (issue 45, docs/export.md): a signed-in person opens "Export and import"
// beside New chat, downloads the open conversation as Markdown and as JSON and everything as one
// archive, imports the JSON back and finds the copy listed and equal, imports a ChatGPT export
// and reads what did not map, and is told in words when a file is not an export, with nothing
// imported. Titles that look like markup stay text. Screenshots at 1280 and 390 px in both
// themes; axe-core finds nothing serious in the open panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startPortal, launchBrowser, shots, usersConfig, people, signIn, sendAndWait, conversationInUrl,
  scanBoth,
} from './portal.mjs';

const CHATGPT = JSON.stringify([{
  title: 'Herons <img src=x onerror=alert(1)>',
  current_node: 'c',
  mapping: {
    root: { id: 'root', message: null, parent: null, children: ['a'] },
    a: { id: 'a', parent: 'root', children: ['b'], message: { author: { role: 'user' }, content: { content_type: 'text', parts: ['How many herons nest at the lake?'] } } },
    b: { id: 'b', parent: 'a', children: ['c'], message: { author: { role: 'assistant' }, recipient: 'all', content: { content_type: 'text', parts: ['About 42 pairs.'] } } },
    c: { id: 'c', parent: 'b', children: [], message: { author: { role: 'user' }, content: { content_type: 'multimodal_text', parts: [{ content_type: 'image_asset_pointer', asset_pointer: 'file-service://file-1' }] } } },
  },
}]);

/** Screenshots of the page in both themes, as `exchange-<name>-<theme>.png`. */
async function shootBoth(page, name) {
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: join(shots, `exchange-${name}-${theme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

const transcript = (page, id) => page.evaluate(async (id) => (await fetch(`/api/conversations/${id}`)).json(), id);
const listedTitles = (page) => page.locator('nav [data-testid="conversation"] .title').allInnerTexts();

test('a person exports a conversation, imports it back equal, and imports a ChatGPT export', { timeout: 180000 }, async () => {
  const { config, remove } = usersConfig();
  const portal = await startPortal(['--demo-pace', '0', '--config', config]);
  let browser;
  const found = [];
  try {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await context.newPage();
    await signIn(page, portal.url, people.alice);
    const said = 'Plan the <b>heron</b> survey';
    await sendAndWait(page, said);
    const id = conversationInUrl(page);

    const opener = page.getByRole('button', { name: 'Export and import' });
    await opener.click();
    const panel = page.getByTestId('exchange');
    await panel.waitFor();
    assert.equal(await panel.evaluate((d) => d.open && d.matches(':modal')), true, 'a modal dialog');
    found.push(...await scanBoth(page, 'open'));
    await shootBoth(page, 'open');

    // Markdown to read, named after the conversation.
    const [markdown] = await Promise.all([page.waitForEvent('download'), panel.getByRole('link', { name: 'Download Markdown' }).click()]);
    assert.equal(markdown.suggestedFilename(), 'Plan-the-b-heron-b-survey.md');
    const text = readFileSync(await markdown.path(), 'utf8');
    assert.ok(text.startsWith(`# ${said}\n\n## 1. You\n\n${said}\n\n## 1. Assistant\n`), text);

    // JSON, imported back: a second conversation, listed, equal to the first.
    const [json] = await Promise.all([page.waitForEvent('download'), panel.getByRole('link', { name: 'Download JSON' }).click()]);
    await panel.getByLabel('File').setInputFiles(await json.path());
    await panel.getByRole('button', { name: 'Import' }).click();
    await panel.getByText('Imported 1 conversation from Portal.').waitFor();
    const made = panel.getByTestId('import-made');
    const copyLink = made.getByRole('link', { name: said });
    const copy = decodeURIComponent((await copyLink.getAttribute('href')).replace('/c/', ''));
    assert.notEqual(copy, id);
    assert.deepEqual(await transcript(page, copy), await transcript(page, id), 'the copy equals the original');
    await page.waitForFunction((want) => [...document.querySelectorAll('nav [data-testid="conversation"] .title')]
      .filter((t) => t.textContent === want).length === 2, said, { timeout: 15000 });

    // Everything at once: a ZIP archive holding both conversations (its entries' names are
    // stored as they are, so they can be read without unpacking it).
    const [archive] = await Promise.all([page.waitForEvent('download'), panel.getByRole('link', { name: 'Download archive' }).click()]);
    assert.equal(archive.suggestedFilename(), 'portal-archive.zip');
    const zip = readFileSync(await archive.path());
    assert.equal(zip.subarray(0, 4).toString('latin1'), 'PK\x03\x04', 'a ZIP archive');
    for (const entry of ['README.md', 'conversations.json', 'markdown/0001-Plan-the-b-heron-b-survey.md', 'markdown/0002-Plan-the-b-heron-b-survey.md']) {
      assert.ok(zip.includes(entry), `the archive holds ${entry}`);
    }
    // And it imports back as it downloaded: two more copies.
    await panel.getByLabel('File').setInputFiles(await archive.path());
    await panel.getByRole('button', { name: 'Import' }).click();
    await panel.getByText('Imported 2 conversations from Portal.').waitFor();
    await page.waitForFunction((want) => [...document.querySelectorAll('nav [data-testid="conversation"] .title')]
      .filter((t) => t.textContent === want).length === 4, said, { timeout: 15000 });

    // ChatGPT's export: what did not map is said under it.
    await panel.getByLabel('File').setInputFiles({ name: 'conversations.json', mimeType: 'application/json', buffer: Buffer.from(CHATGPT) });
    await panel.getByRole('button', { name: 'Import' }).click();
    await panel.getByText('Imported 1 conversation from ChatGPT.').waitFor();
    const herons = made.getByRole('link', { name: 'Herons <img src=x onerror=alert(1)>' });
    await herons.waitFor();
    assert.match(await made.innerText(), /picture was left out/);
    assert.equal(await page.locator('dialog img, nav img').count(), 0, 'a title stays text');
    await shootBoth(page, 'imported');
    found.push(...await scanBoth(page, 'imported'));

    // A file that is not an export: refused in words, nothing imported.
    const before = (await listedTitles(page)).length;
    await panel.getByLabel('File').setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('{"notes": [1, 2') });
    await panel.getByRole('button', { name: 'Import' }).click();
    const problem = panel.locator('[role="alert"]');
    await problem.getByText(/Nothing was imported: the file is not JSON \(line 1, column 15: it ends before its JSON does\)/).waitFor();
    assert.equal(await panel.getByTestId('import-made').locator('li').count(), 0, 'the last import\'s list is gone');
    await shootBoth(page, 'refused');
    assert.equal((await listedTitles(page)).length, before, 'nothing was imported');

    // Closed, the focus goes back to the button; the imported conversation opens from the list.
    await panel.getByRole('button', { name: 'Close' }).click();
    assert.equal(await opener.evaluate((b) => b === document.activeElement), true, 'the focus is back on the opener');
    await page.locator('nav [data-testid="conversation"] .title', { hasText: 'Herons' }).click();
    await page.getByText('About 42 pairs.').waitFor();

    // At 390 px the panel fits the window.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.locator('#drawer-toggle').click();
    await opener.click();
    await panel.waitFor();
    const fits = await panel.evaluate((d) => d.getBoundingClientRect().right <= window.innerWidth);
    assert.equal(fits, true, 'the panel fits 390 px');
    await shootBoth(page, 'phone');
    await context.close();
    assert.deepEqual(found, [], 'axe-core finds nothing serious');
  } finally {
    await browser?.close();
    portal.stop();
    remove();
  }
});
