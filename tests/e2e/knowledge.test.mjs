// Knowledge (issue 43, docs/knowledge.md): an administrator makes the organisation's collection
// `handbook` from the sidebar's Knowledge panel and adds a Markdown, an HTML and a PDF document to
// it (a picture among them is refused in the server's words, and a member may not make a shared
// collection); a member asks an agent that searches `handbook` a question whose words are in the
// Markdown document, and sees its sources under the answer: the document, the passage whole when
// opened; a reload shows the same. Once the administrator deletes that document, a new question
// no longer lists it. Screenshots of the panel and the sources in both themes; axe-core finds
// nothing serious.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, people, scanBoth, sendAndWait, shootWidths, shots, signIn, startPortal, usersConfig } from './portal.mjs';

const HANDBOOK = '# Leave\n\nEveryone takes twenty-five days of annual leave a year, booked in the calendar.\n\n'
  + '# Expenses\n\nReceipts go to finance within a month.\n';
const WELCOME = '<!doctype html><html><head><title>Welcome</title></head><body><h1>First week</h1>'
  + '<p>Your mentor meets you at the heron statue on Monday.</p></body></html>';
const QUESTION = 'How many days of annual leave does everyone take?';
// A 1×1 PNG: not a document.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A PDF with one page per line of `lines`, each saying its line in Helvetica. */
function pdf(lines) {
  const pages = lines.map((_, i) => 4 + 2 * i + 1);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pages.map((p) => `${p} 0 R`).join(' ')}] /Count ${lines.length} /Resources << /Font << /F1 3 0 R >> >> /MediaBox [0 0 612 792] >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  for (const [i, line] of lines.entries()) {
    const stream = `BT /F1 12 Tf 72 720 Td (${line}) Tj ET`;
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
    objects.push(`<< /Type /Page /Parent 2 0 R /Contents ${4 + 2 * i} 0 R >>`);
  }
  let body = '%PDF-1.4\n';
  const offsets = objects.map((object, i) => {
    const at = body.length;
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) body += `${String(at).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** Opens the Knowledge panel from the sidebar; resolves to it. */
async function openPanel(page) {
  await page.getByTestId('knowledge-open').click();
  const panel = page.getByTestId('knowledge');
  await panel.getByRole('heading', { name: 'Collections' }).waitFor();
  return panel;
}

/** The document names of the sources listed under turn `turn`'s answer. */
const sourceNames = (page, turn) => page.locator(`[data-turn="${turn}"] [data-testid="source"] .source-document`).allInnerTexts();

test('knowledge: an administrator fills the organisation\'s collection, a member sees an answer\'s sources, a deleted document is no longer found', { timeout: 300000 }, async () => {
  const { config, remove } = usersConfig();
  appendFileSync(join(config, 'organisations', 'acme', 'users', 'alice', 'user.toml'), 'role = "admin"\n');
  writeFileSync(
    join(config, 'organisations', 'acme', 'agents', 'librarian.toml'),
    'name = "Librarian"\nmodel = "demo"\nknowledge = ["handbook"]\n',
  );
  const files = mkdtempSync(join(tmpdir(), 'portal-knowledge-'));
  const portal = await startPortal(['--demo-pace', '0', '--config', config]);
  let browser;
  try {
    writeFileSync(join(files, 'handbook.md'), HANDBOOK);
    writeFileSync(join(files, 'welcome.html'), WELCOME);
    writeFileSync(join(files, 'travel.pdf'), pdf(['Trains are booked in second class.', 'Hotels are booked by the office.']));
    writeFileSync(join(files, 'dot.png'), Buffer.from(PIXEL, 'base64'));
    browser = await launchBrowser();
    const admin = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const member = await browser.newPage({ viewport: { width: 1280, height: 900 } });

    // A member may not make the organisation's collection: the server's sentence says so.
    await signIn(member, portal.url, people.bob);
    let panel = await openPanel(member);
    assert.equal(await panel.getByText('No collections yet.').count(), 1);
    await panel.getByLabel('Name').fill('handbook');
    await panel.getByLabel(/The organisation's/).check();
    await panel.getByRole('button', { name: 'Make collection' }).click();
    const refusal = panel.locator('.keys-form [role="alert"]');
    await refusal.filter({ hasText: /\S/ }).waitFor();
    assert.match(await refusal.innerText(), /administrator/i);
    await panel.getByTestId('knowledge-close').click();

    // The administrator makes it and adds three documents, and a picture that is refused.
    await signIn(admin, portal.url, people.alice);
    panel = await openPanel(admin);
    await panel.getByLabel('Name').fill('handbook');
    await panel.getByLabel('Description').fill('How Acme works');
    await panel.getByLabel(/The organisation's/).check();
    await panel.getByRole('button', { name: 'Make collection' }).click();
    await panel.getByRole('heading', { name: 'handbook' }).waitFor();
    await panel.getByLabel('Add documents').setInputFiles(['handbook.md', 'welcome.html', 'travel.pdf', 'dot.png'].map((f) => join(files, f)));
    const progress = panel.getByTestId('knowledge-progress');
    await progress.locator('li').first().waitFor();
    await admin.waitForFunction(() => {
      const lines = [...document.querySelectorAll('[data-testid="knowledge-progress"] li')];
      return lines.length === 4 && lines.every((l) => !l.innerText.includes('adding…'));
    }, null, { timeout: 60000 });
    for (const name of ['handbook.md', 'welcome.html', 'travel.pdf']) {
      assert.match(await progress.locator(`li[data-name="${name}"]`).innerText(), /added$/, name);
    }
    const refused = await progress.locator('li[data-name="dot.png"] .problem').innerText();
    assert.ok(refused.length > 10 && !/adding|added/.test(refused), refused);
    const documents = panel.getByTestId('knowledge-documents');
    await admin.waitForFunction(() => document.querySelectorAll('[data-testid="knowledge-documents"] li[data-document]').length === 3);
    assert.match(await documents.locator('li[data-name="travel.pdf"]').innerText(), /PDF · 2 pages · \d+ passages? · /);
    assert.match(await documents.locator('li[data-name="handbook.md"]').innerText(), /Markdown · 1 passage · /);
    assert.match(await documents.locator('li[data-name="welcome.html"]').innerText(), /HTML · /);
    await shootWidths(admin, 'knowledge-collection');
    const found = await scanBoth(admin, 'the knowledge panel');
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));
    await panel.getByRole('button', { name: '‹ All collections' }).click();
    const listed = panel.getByTestId('knowledge-list').locator('li[data-name="handbook"]');
    assert.match(await listed.innerText(), /Organisation's[\s\S]*How Acme works[\s\S]*3 documents/);
    await admin.screenshot({ path: join(shots, 'knowledge-list-1280-light.png') });
    await panel.getByTestId('knowledge-close').click();

    // The member asks the librarian; the answer's sources list the Markdown document's passage.
    await member.reload();
    await member.getByTestId('agent-picker').selectOption({ label: 'Librarian' });
    await sendAndWait(member, QUESTION);
    await member.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 30000 });
    const sources = member.locator('[data-turn="1"] [data-testid="sources"]');
    await sources.waitFor();
    assert.ok((await sourceNames(member, 1)).includes('handbook.md'), String(await sourceNames(member, 1)));
    const entry = sources.locator('[data-testid="source"]', { hasText: 'handbook.md' });
    assert.match(await entry.getAttribute('id'), /^turn-1-source-knowledge-\d+$/);
    const reference = await entry.getAttribute('data-reference');
    assert.ok((await member.locator('[data-turn="1"] .block.answer').innerText()).includes(`[${reference}]`), 'the answer cites the passage its sources list');
    assert.equal(await entry.locator('.source-text').isVisible(), false, 'the passage is a line until opened');
    await entry.locator('summary').click();
    assert.match(await entry.locator('.source-text').innerText(), /twenty-five days of annual leave/);
    await shootWidths(member, 'knowledge-sources');
    const scanned = await scanBoth(member, 'an answer with sources');
    assert.deepEqual(scanned, [], JSON.stringify(scanned, null, 2));

    // A reload draws the same sources from the stored turn.
    await member.reload();
    await member.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 30000 });
    await member.locator('[data-turn="1"] [data-testid="sources"]').waitFor();
    assert.ok((await sourceNames(member, 1)).includes('handbook.md'));
    assert.equal(await member.locator(`#turn-1-source-${reference.replace(':', '-')}`).count(), 1);

    // The administrator deletes the Markdown document; a new question no longer finds it.
    panel = await openPanel(admin);
    await panel.getByRole('button', { name: 'Open “handbook”' }).click();
    await panel.getByRole('button', { name: 'Delete “handbook.md”' }).click();
    const confirm = admin.getByTestId('document-delete-dialog');
    await admin.screenshot({ path: join(shots, 'knowledge-delete-document-1280-light.png') });
    await confirm.getByRole('button', { name: 'Delete document' }).click();
    await confirm.waitFor({ state: 'detached' });
    await admin.waitForFunction(() => document.querySelectorAll('[data-testid="knowledge-documents"] li[data-document]').length === 2);
    assert.match(await panel.getByRole('status').innerText(), /“handbook\.md” is deleted/);

    await sendAndWait(member, QUESTION);
    await member.locator('[data-turn="2"][data-settled="true"]').waitFor({ timeout: 30000 });
    const after = await sourceNames(member, 2);
    assert.ok(!after.includes('handbook.md'), `the deleted document is not listed: ${after}`);
    assert.ok((await sourceNames(member, 1)).includes('handbook.md'), 'the earlier answer keeps the sources it was given');
    // The new answer's end, with its sources if its search found any.
    await member.locator('[data-turn="2"] .reply-actions').scrollIntoViewIfNeeded();
    await member.screenshot({ path: join(shots, 'knowledge-after-delete-1280-light.png') });
  } finally {
    await browser?.close();
    portal.stop();
    remove();
    rmSync(files, { recursive: true, force: true });
  }
});
