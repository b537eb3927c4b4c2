// Screens and themes: a phone (390×844) and the narrowest width (360 px) fit the page without
// sideways scrolling, with the message box full width and the header condensed; at 768 to 1280
// px no name in the header is cut; the dark theme
// follows prefers-color-scheme and the toggle's choice is remembered; right-to-left messages run
// right to left (dir="auto").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

/** How the page fits its width: overflow sideways, the message box's and header's boxes. */
const fit = (page) => page.evaluate(() => ({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  box: document.querySelector('.composer textarea').getBoundingClientRect().width,
  header: document.querySelector('.portal-header').getBoundingClientRect().height,
  width: window.innerWidth,
}));

test('a phone and a 360 px screen fit; the header is condensed and the message box full width', { timeout: 180000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0']);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await page.goto(portal.url);
    await page.getByTestId('greeting').waitFor();
    await page.screenshot({ path: join(shots, 'phone-new-chat.png') });
    let fits = await fit(page);
    assert.ok(fits.overflow <= 0, `no sideways scrolling: ${JSON.stringify(fits)}`);
    assert.ok(fits.box >= fits.width - 40, `the message box takes the width: ${JSON.stringify(fits)}`);
    assert.ok(fits.header <= 96, `the header stays within two short rows: ${JSON.stringify(fits)}`);

    // An example from the greeting becomes the draft.
    await page.getByRole('button', { name: 'Tell me about writing systems' }).click();
    assert.equal(await page.getByLabel('Message').inputValue(), 'Tell me about writing systems');
    await page.getByLabel('Message').press('Enter');
    await status(page, 1, 'completed');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    fits = await fit(page);
    assert.ok(fits.overflow <= 0, `no sideways scrolling with a reply: ${JSON.stringify(fits)}`);
    await page.screenshot({ path: join(shots, 'phone-reply.png') });
    await page.screenshot({ path: join(shots, 'phone-reply-full.png'), fullPage: true });

    await page.setViewportSize({ width: 360, height: 740 });
    fits = await fit(page);
    assert.ok(fits.overflow <= 0, `no sideways scrolling at 360 px: ${JSON.stringify(fits)}`);
    assert.ok(fits.box >= fits.width - 40, `the message box takes the width at 360 px: ${JSON.stringify(fits)}`);
    await page.screenshot({ path: join(shots, 'narrow-360.png') });

    // Wider screens: the agent's and the model's names are never cut, the header's controls
    // wrap below them as a row of their own where one row cannot hold everything.
    for (const width of [768, 900, 1024, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      const cut = await page.evaluate(() => [...document.querySelectorAll('.portal-header :is(.agent-label, .model-label)')]
        .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
      assert.deepEqual(cut, [], `no name cut at ${width} px`);
      const header = await page.locator('.portal-header').boundingBox();
      assert.ok(header.height <= 96, `the header stays within two rows at ${width} px: ${header.height}`);
      await page.screenshot({ path: join(shots, `header-${width}.png`), clip: { x: 0, y: 0, width, height: 120 } });
    }
    await page.setViewportSize({ width: 360, height: 740 });

    // Arabic runs right to left.
    await page.getByLabel('Message').fill('مرحبا، كيف حالك؟');
    await page.getByLabel('Message').press('Enter');
    await status(page, 2, 'completed');
    const direction = await page.locator('[data-turn="2"] .message.user p').evaluate((p) => [p.dir, getComputedStyle(p).direction]);
    assert.deepEqual(direction, ['auto', 'rtl']);
  } finally {
    await browser?.close();
    portal.stop();
  }
});

test('the dark theme follows the system, and the toggle remembers the choice', { timeout: 120000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0']);
  let browser;
  try {
    browser = await launchBrowser();
    const dark = await browser.newPage({ viewport: { width: 900, height: 900 }, colorScheme: 'dark' });
    await dark.goto(portal.url);
    await dark.getByTestId('model-label').waitFor();
    const background = () => dark.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    assert.equal(await background(), 'rgb(22, 23, 26)', 'dark paper from prefers-color-scheme');
    assert.equal(await dark.getByTestId('theme-toggle').getAttribute('aria-pressed'), 'true');
    await dark.getByLabel('Message').fill('Tell me about writing systems');
    await dark.getByLabel('Message').press('Enter');
    await status(dark, 1, 'completed');
    await dark.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    await dark.getByLabel('Message').fill('Please publish a note on the herons');
    await dark.getByLabel('Message').press('Enter');
    await status(dark, 2, 'paused');
    await dark.screenshot({ path: join(shots, 'dark-theme.png') });
    await dark.screenshot({ path: join(shots, 'dark-theme-full.png'), fullPage: true });
    await dark.close();

    // On a light system the toggle turns the page dark, and a reload keeps it so.
    const light = await browser.newPage({ viewport: { width: 390, height: 844 }, colorScheme: 'light' });
    await light.goto(portal.url);
    await light.getByTestId('model-label').waitFor();
    const paper = () => light.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    assert.equal(await paper(), 'rgb(251, 250, 247)');
    await light.getByTestId('theme-toggle').click();
    assert.equal(await paper(), 'rgb(22, 23, 26)');
    await light.reload();
    await light.getByTestId('model-label').waitFor();
    assert.equal(await paper(), 'rgb(22, 23, 26)', 'the choice is remembered');
    assert.equal(await light.getByTestId('theme-toggle').getAttribute('aria-pressed'), 'true');
    await light.screenshot({ path: join(shots, 'phone-dark.png') });
    await light.getByTestId('theme-toggle').click();
    assert.equal(await paper(), 'rgb(251, 250, 247)');
  } finally {
    await browser?.close();
    portal.stop();
  }
});
