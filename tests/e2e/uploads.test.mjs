// Six files chosen at once are all attached: the composer uploads them one at a time, so the
// server's limit on a person's uploads in flight (4) never refuses one of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

test('six files chosen at once are all attached', async () => {
  const portal = await startPortal();
  const files = mkdtempSync(join(tmpdir(), 'portal-uploads-'));
  let browser;
  try {
    const paths = [1, 2, 3, 4, 5, 6].map((n) => {
      const path = join(files, `note-${n}.md`);
      writeFileSync(path, `# Note ${n}\n\nThe heron count on day ${n} was ${40 + n}.\n`);
      return path;
    });
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    await page.getByTestId('attach').setInputFiles(paths);
    const uploaded = page.locator('[data-testid="attachment-chip"][data-uploaded="true"]');
    await uploaded.nth(5).waitFor({ timeout: 30000 });
    await page.screenshot({ path: join(shots, 'uploads-six.png') });
    assert.equal(await uploaded.count(), 6);
    assert.equal(await page.locator('.problem').count(), 0, 'no upload was refused');
  } finally {
    await browser?.close();
    portal.stop();
    rmSync(files, { recursive: true, force: true });
  }
});
