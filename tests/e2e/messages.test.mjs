// A person's message as they wrote it (issue 32): a 300-character address wraps inside its bubble
// and the reply, so the page never scrolls sideways, and Shift+Enter's line breaks are kept, at
// phone and desktop widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots, sendAndWait, scanBoth } from './portal.mjs';

const url = `https://example.org/${'herons-of-the-lake-'.repeat(15)}end`;

test('a long address and a two-line message wrap inside the page at 390 and 1280 px', async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.1'], { viewport: { width: 1280, height: 800 } });
  try {
    assert.ok(url.length >= 300, `${url.length} characters`);
    await sendAndWait(page, `Read this: ${url}`);
    // Two lines, typed with Shift+Enter between them.
    await page.getByLabel('Message').fill('First line about the herons');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('Second line about the nests');
    await page.keyboard.press('Enter');
    await page.locator('[data-turn="2"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    const second = page.locator('[data-turn="2"] .message.user p');
    assert.equal(await second.innerText(), 'First line about the herons\nSecond line about the nests');
    const lines = await second.evaluate((p) => {
      const range = document.createRange();
      range.selectNodeContents(p);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    assert.equal(lines, 2, 'drawn on two lines');
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      // Drawn afresh at this width (a narrow screen's conversation list slides away).
      await page.reload();
      await page.locator('[data-turn="2"][data-settled="true"]').waitFor();
      await page.locator('[data-turn="1"] .message.user').scrollIntoViewIfNeeded();
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `no sideways scroll at ${width} px (${wide} px too wide)`);
      const bubble = await page.locator('[data-turn="1"] .message.user').boundingBox();
      assert.ok(bubble.x + bubble.width <= width, `the bubble fits at ${width} px`);
      await page.screenshot({ path: join(shots, `messages-long-address-${width}.png`) });
      const found = await scanBoth(page, `a long address at ${width} px`);
      assert.deepEqual(found, [], JSON.stringify(found, null, 1));
      // The header stays at the top however far the conversation scrolls.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForFunction(() => window.scrollY > 0);
      const header = await page.locator('.portal-header').boundingBox();
      assert.ok(Math.abs(header.y) < 1, `the header is at the top at ${width} px: ${header.y}`);
    }
  } finally {
    await close();
  }
});

test('"/" offers the /compact command where skills are, also with no skill to offer', async () => {
  const { page, close } = await openPortal([], { viewport: { width: 1280, height: 800 } });
  try {
    await page.getByLabel('Message').click();
    await page.keyboard.type('/');
    const option = page.getByRole('listbox', { name: 'Commands and skills' }).getByRole('option');
    await option.first().waitFor();
    assert.match(await option.first().innerText(), /^\/compact/);
    await page.screenshot({ path: join(shots, 'messages-slash-menu.png') });
    await page.keyboard.press('Enter');
    assert.equal(await page.getByLabel('Message').inputValue(), '/compact ');
  } finally {
    await close();
  }
});
