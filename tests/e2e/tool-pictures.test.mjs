// A tool's picture in its card (issue 48): the MCP reference server's get-tiny-image answers
// with a PNG, which the portal keeps as the owner's attachment and the card shows from its
// owner-only address, with alt text, as it ran and after a reload, and which the model (the
// demo, which can see) is handed; drawn at 390, 1280 and 1920 px in both themes, and axe-clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, root, scanBoth, shots, startPortal } from './portal.mjs';

const everything = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** A local-mode configuration whose agent has the reference server's get-tiny-image. */
function config(folder) {
  const org = join(folder, 'config', 'organisations', 'local');
  mkdirSync(join(org, 'mcp'), { recursive: true });
  mkdirSync(join(org, 'agents'), { recursive: true });
  writeFileSync(join(org, 'organisation.toml'), 'name = "Local"\n');
  writeFileSync(
    join(org, 'mcp', 'everything.toml'),
    `command = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(everything)}, "stdio"]\n`,
  );
  writeFileSync(join(org, 'agents', 'assistant.toml'), 'name = "Assistant"\nmcp = { everything = ["get-tiny-image"] }\n');
  return join(folder, 'config');
}

test('get-tiny-image shows its picture in its card, as it ran and after a reload', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'portal-e2e-tool-pictures-'));
  const portal = await startPortal(['--config', config(folder), '--demo-pace', '0.2']);
  let browser;
  try {
    for (let tries = 0; ; tries++) {
      const servers = await (await fetch(`${portal.url}/api/agents/assistant/mcp`)).json();
      if (servers.every((s) => s.status === 'connected')) break;
      assert.ok(tries < 300, `the reference server connects: ${JSON.stringify(servers)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(portal.url);
    await page.getByLabel('Message').fill('Please use everything__get-tiny-image');
    await page.getByLabel('Message').press('Enter');
    const turn = page.locator('[data-turn="1"]');
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });

    const card = turn.getByTestId('tool-card');
    const seePicture = async (when) => {
      assert.equal(await card.getAttribute('data-state'), 'done', when);
      const picture = card.locator('img.tool-picture');
      assert.equal(await picture.count(), 1, when);
      assert.match(await picture.getAttribute('src'), /^\/api\/attachments\/att_[0-9a-f]{32}\/content$/, when);
      assert.match(await picture.getAttribute('alt'), /^Picture from get-tiny-image, \d+×\d+$/, when);
      await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await picture.elementHandle());
      const served = await page.evaluate(async (src) => (await fetch(src)).headers.get('content-type'), await picture.getAttribute('src'));
      assert.equal(served, 'image/png', when);
    };
    await seePicture('as it ran');
    // The model was handed the picture too: the demo, which can see, says what reached it.
    assert.match(await turn.innerText(), /I looked at the picture “everything__get-tiny-image picture 1”: it reached me as image\/png of \d+×\d+ pixels/);
    await page.reload();
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
    await seePicture('after a reload');

    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await card.scrollIntoViewIfNeeded();
      for (const theme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: theme });
        await page.screenshot({ path: join(shots, `tool-picture-${width}-${theme}.png`) });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    const found = await scanBoth(page, 'a tool picture');
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));
  } finally {
    await browser?.close();
    await portal.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
