// Projects (issue 45, docs/projects.md): the person makes a project with instructions from the
// sidebar's Projects panel, moves two conversations into it from their rows (pinning one), and
// lists the project: its two conversations only, the pinned one first, searched within the
// project. A new turn in one of them reads the project's instructions as the prompt's layer 3,
// which the inspector shows; a new chat opened while the project is listed is in it. Deleting the
// project asks what becomes of its conversations; kept, they are in no project and every
// conversation is listed again. Screenshots at 390, 1280 and 1920 px in both themes; axe-core
// finds nothing serious.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPortal, scanBoth, sendAndWait, shootWidths, conversationInUrl } from './portal.mjs';

const INSTRUCTIONS = 'Give every count per hectare.';

// An organisation whose agent has instructions of its own.
function configuration() {
  const folder = mkdtempSync(join(tmpdir(), 'portal-projects-'));
  const org = join(folder, 'config', 'organisations', 'studio');
  mkdirSync(join(org, 'agents'), { recursive: true });
  writeFileSync(join(org, 'organisation.toml'), 'name = "Studio"\n');
  writeFileSync(join(org, 'agents', 'assistant.toml'), 'name = "Assistant"\nmodel = "demo"\ninstructions = "Answer briefly."\n');
  return join(folder, 'config');
}

/** The titles the sidebar lists, in order. */
const listed = (page) => page.locator('[data-testid="conversation"] .title').allInnerTexts();

/** Waits until the sidebar lists exactly `titles`, in that order. */
async function waitForList(page, titles) {
  await page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('[data-testid="conversation"] .title')].map((t) => t.textContent)) === JSON.stringify(want),
    titles,
    { timeout: 15000 },
  ).catch(async () => assert.deepEqual(await listed(page), titles));
}

/** Moves the conversation titled `title` into `project` from its row, pinned or not. */
async function moveInto(page, title, project, { pin = false, shoot = false } = {}) {
  const row = page.locator('[data-testid="conversation"]', { hasText: title });
  await row.hover();
  await row.getByRole('button', { name: `Move or pin ${title}` }).click();
  const panel = page.getByTestId('projects');
  await panel.getByRole('heading', { name: `Move or pin “${title}”` }).waitFor();
  await panel.getByRole('radio', { name: project }).check();
  if (pin) await panel.getByLabel('Pinned: listed before the others').check();
  if (shoot) await shootWidths(page, 'projects-move');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.waitFor({ state: 'detached' });
}

test('a project with instructions: two conversations moved in, one pinned, listed and searched within, its layer in the inspector, deleted keeping them', { timeout: 300000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0', '--config', configuration()], {
    viewport: { width: 1280, height: 900 },
  });
  try {
    // Three conversations, the newest first in the list.
    for (const text of ['Heron count at the lake', 'Egrets on the Tagus', 'Lunch plans']) {
      await page.getByRole('button', { name: 'New chat' }).click();
      await sendAndWait(page, text);
    }
    await waitForList(page, ['Lunch plans', 'Egrets on the Tagus', 'Heron count at the lake']);

    // A project made from the panel, with instructions.
    await page.getByTestId('projects-open').click();
    const panel = page.getByTestId('projects');
    await panel.getByText('No projects yet.').waitFor();
    assert.equal(await panel.evaluate((d) => d.open && d.matches(':modal')), true, 'a modal dialog');
    await panel.getByLabel('Name').fill('Heron survey');
    await panel.getByLabel('Instructions').fill(INSTRUCTIONS);
    await panel.getByRole('button', { name: 'Make project' }).click();
    await panel.getByRole('status').filter({ hasText: '“Heron survey” is made' }).waitFor();
    assert.equal(await panel.getByTestId('projects-list').locator('li').count(), 1);
    // A second project with a name too long is refused in words, and nothing is made.
    await panel.getByLabel('Name').first().fill('x'.repeat(80));
    await panel.evaluate((d) => { d.querySelector('input').removeAttribute('maxlength'); });
    await panel.getByLabel('Name').first().fill('x'.repeat(81));
    await panel.getByRole('button', { name: 'Make project' }).click();
    await panel.getByRole('alert').filter({ hasText: /80/ }).waitFor();
    assert.equal(await panel.getByTestId('projects-list').locator('li').count(), 1);
    await shootWidths(page, 'projects-panel');
    const found = await scanBoth(page, 'projects panel');
    await panel.getByTestId('projects-close').click();
    await panel.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'projects-open', 'focus back on the opener');

    // Two conversations moved in from their rows; the older one pinned.
    await moveInto(page, 'Egrets on the Tagus', 'Heron survey', { shoot: true });
    await moveInto(page, 'Heron count at the lake', 'Heron survey', { pin: true });
    // Pinned, the oldest conversation is listed first.
    await waitForList(page, ['Heron count at the lake', 'Lunch plans', 'Egrets on the Tagus']);
    assert.equal(await page.locator('[data-testid="conversation"]').first().locator('.mark.pinned').count(), 1);

    // The project listed: its two conversations only, the pinned one first.
    await page.getByTestId('projects-open').click();
    await panel.getByRole('button', { name: 'Show “Heron survey”' }).click();
    await panel.waitFor({ state: 'detached' });
    await page.getByTestId('shown-project').getByRole('heading', { name: 'Heron survey' }).waitFor();
    await waitForList(page, ['Heron count at the lake', 'Egrets on the Tagus']);
    // Searched within the project: "Lunch" is in no conversation of it.
    await page.getByLabel('Search conversations').fill('Lunch');
    await page.getByText('No conversation mentions “Lunch”.').waitFor();
    await page.getByLabel('Search conversations').fill('Egrets');
    await waitForList(page, ['Egrets on the Tagus']);
    await page.getByLabel('Search conversations').fill('');
    await waitForList(page, ['Heron count at the lake', 'Egrets on the Tagus']);
    await shootWidths(page, 'projects-listed');
    found.push(...await scanBoth(page, 'a project listed'));

    // A new turn in a conversation of the project reads the project's instructions as layer 3.
    await page.locator('[data-testid="conversation"]', { hasText: 'Egrets on the Tagus' }).getByRole('link').click();
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor();
    await sendAndWait(page, 'How many egrets per hectare?');
    await page.locator('[data-turn="2"][data-settled="true"]').waitFor({ timeout: 30000 });
    await page.locator('[data-turn="2"]').getByTestId('inspect').click();
    const inspector = page.getByTestId('inspector');
    await inspector.getByTestId('inspector-layers').waitFor();
    const labels = await inspector.locator('.inspector-layers summary').allInnerTexts();
    // The inspector numbers the layers it shows one after the other (docs/inspector.md).
    assert.deepEqual(labels.map((l) => l.split(' · ')[0]),
      ['1. Portal floor', '2. Author instructions', '3. Project instructions', '4. Short-term memory', '5. New message'], labels.join(' | '));
    await inspector.locator('[data-layer="project"] summary').click();
    assert.equal(await inspector.locator('[data-layer="project"] pre').innerText(), INSTRUCTIONS);
    await page.keyboard.press('Escape');
    await inspector.waitFor({ state: 'detached' });
    // The first turn, before the move, read no project.
    await page.locator('[data-turn="1"]').getByTestId('inspect').click();
    await inspector.getByTestId('inspector-layers').waitFor();
    assert.equal(await inspector.locator('[data-layer="project"]').count(), 0, 'no project layer before the move');
    await page.keyboard.press('Escape');

    // A new chat while the project is listed opens in it.
    await page.getByRole('button', { name: 'New chat' }).click();
    await sendAndWait(page, 'Nests along the river');
    const opened = conversationInUrl(page);
    await waitForList(page, ['Heron count at the lake', 'Nests along the river', 'Egrets on the Tagus']);
    const project = await page.evaluate(async (id) => (await (await fetch('/api/conversations?limit=50')).json())
      .conversations.find((c) => c.id === id).project, opened);
    assert.ok(project, 'the new chat is in the project');

    // Deleted, keeping its conversations: they are in no project, and every one is listed.
    await page.getByTestId('projects-open').click();
    await panel.getByRole('button', { name: 'Delete “Heron survey”' }).click();
    const confirm = page.getByTestId('project-delete-dialog');
    assert.equal(await confirm.getByRole('radio', { name: 'Keep them, in no project' }).isChecked(), true, 'keeping is the default');
    found.push(...await scanBoth(page, 'deleting a project'));
    await confirm.getByRole('button', { name: 'Delete project' }).click();
    await panel.getByRole('status').filter({ hasText: 'its conversations are in no project now' }).waitFor();
    await panel.getByText('No projects yet.').waitFor();
    await panel.getByTestId('projects-close').click();
    assert.equal(await page.getByTestId('shown-project').count(), 0, 'every conversation listed again');
    await waitForList(page, ['Heron count at the lake', 'Nests along the river', 'Egrets on the Tagus', 'Lunch plans']);
    const after = await page.evaluate(async () => (await (await fetch('/api/conversations?limit=50')).json()).conversations);
    assert.deepEqual(after.map((c) => c.project), [null, null, null, null]);
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));
  } finally {
    await close();
  }
});
