// A message sent in the browser gets the demo model's reply streamed in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

test('a sent message gets the demo reply streamed in', async () => {
  const portal = await startPortal(['--demo-pace', '0.2']);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    assert.match(await page.getByTestId('model-label').innerText(), /demo/);
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await page.locator('[data-turn-status="running"]').waitFor({ timeout: 10000 });
    await page.locator('[data-turn-status="completed"]').waitFor({ timeout: 60000 });
    const reply = await page.locator('.message.assistant .block.text').innerText();
    assert.ok(reply.includes('👨‍👩‍👧‍👦'), 'the reply holds the family emoji whole');
    assert.ok(reply.includes('日本語'), 'the reply holds Japanese');
    await page.screenshot({ path: join(shots, 'reply.png'), fullPage: true });
  } finally {
    await browser?.close();
    portal.stop();
  }
});
