// The built app under the server's Content-Security-Policy (docs/security.md): it loads, streams
// a reply and draws the context meter's widths with no violation, and refuses to be framed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortal, launchBrowser } from './portal.mjs';

test('the app runs under its content security policy without a violation', async () => {
  const portal = await startPortal(['--demo-pace', '0.2', '--demo-window', '3000']);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.addInitScript(() => {
      window.violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const response = await page.goto(portal.url);
    assert.match(response.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval' 'sha256-/);
    await page.getByTestId('model-label').waitFor();
    await page.getByLabel('Message').fill('hello');
    await page.keyboard.press('Enter');
    await page.locator('[data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 60000 });
    // The meter's widths are style attributes (style-src-attr).
    const fill = await page.locator('.context-meter .fill').evaluate((e) => e.getBoundingClientRect().width);
    const line = await page.locator('.context-meter .line').evaluate((e) => e.offsetLeft);
    assert.ok(fill > 0 && line > 0, `the meter is drawn: fill ${fill} px, line at ${line} px`);
    const family = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
    assert.match(family, /Noto Sans/, 'the style sheet applies');

    const framing = await browser.newPage();
    await framing.setContent(`<iframe src="${portal.url}"></iframe>`);
    await framing.waitForTimeout(1000);
    const framed = framing.frames().find((f) => f !== framing.mainFrame());
    assert.equal(await framed?.locator('[data-testid="model-label"]').count() ?? 0, 0, 'the portal is not drawn in a frame');

    assert.deepEqual(await page.evaluate(() => window.violations), []);
  } finally {
    await browser?.close();
    portal.stop();
  }
});
