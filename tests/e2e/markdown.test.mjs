// Replies are markdown, drawn as the model meant them while they stream and once settled, and
// safely: a fake OpenAI-compatible model streams chat-typical markdown and a hostile corpus; no
// script runs, no dialog opens, and no request leaves for another origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';
import { fakeUpstream } from './upstream.mjs';

const REPLY = `# Herons

Herons **nest in colonies**, *often* in tall trees; see [the survey](https://example.org/herons "a title").

- Grey heron: \`Ardea cinerea\`
- [x] ringed
- [ ] counted

| Species | Nests |
|:---|---:|
| Grey | 120 |
| Purple | 14 |

\`\`\`python
print("herons")
\`\`\`

> 日本語の引用。 Arabic: مرحبا

<script>window.pwned = 'script'</script>
<img src="https://evil.example/pixel.png" onerror="window.pwned = 'img'">
<iframe src="https://evil.example/frame"></iframe>

Links: [js](javascript:window.pwned='js') [JS](JaVaScRiPt:alert(1)) [data](data:text/html,<script>alert(1)</script>) <javascript:alert(1)> [vb](vbscript:msgbox)
![tracker](https://evil.example/track.png) <a href="https://evil.example" onclick="window.pwned='a'">raw</a>

<div onmouseover="window.pwned='div'">hover</div>

The end.`;

test('markdown replies stream and settle as the model meant them, and hostile markdown stays text', { timeout: 120000 }, async () => {
  const upstream = await fakeUpstream();
  upstream.reply(REPLY);
  const portal = await startPortal(['--models', upstream.models]);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const dialogs = [];
    page.on('dialog', (dialog) => { dialogs.push(dialog.message()); dialog.dismiss(); });
    const origin = new URL(portal.url).origin;
    const elsewhere = [];
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== origin) elsewhere.push(request.url());
    });
    await page.goto(portal.url);
    await page.getByTestId('model-label').filter({ hasText: 'Fake GPT' }).waitFor();
    await page.getByLabel('Message').fill('Tell me about herons');
    await page.keyboard.press('Enter');

    const answer = page.locator('[data-turn="1"] .block.answer .body');
    await answer.locator('table').waitFor({ timeout: 30000 });
    await page.screenshot({ path: join(shots, 'markdown-mid-stream.png') });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });
    await answer.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'markdown-settled.png'), fullPage: true });
    // Screenshots leave an empty style attribute on form controls; it is not the page's.
    const html = async () => (await answer.innerHTML()).replaceAll(' style=""', '');
    const settled = await html();

    assert.equal(await answer.locator('h1').innerText(), 'Herons');
    assert.equal(await answer.locator('strong').first().innerText(), 'nest in colonies');
    assert.equal(await answer.locator('em').first().innerText(), 'often');
    const survey = answer.getByRole('link', { name: 'the survey' });
    assert.equal(await survey.getAttribute('href'), 'https://example.org/herons');
    assert.equal(await survey.getAttribute('rel'), 'noopener noreferrer nofollow');
    assert.equal(await survey.getAttribute('title'), null, 'link titles are dropped');
    assert.equal(await answer.locator('li code').innerText(), 'Ardea cinerea');
    assert.deepEqual(await answer.locator('li.task input').evaluateAll((boxes) => boxes.map((b) => b.checked)), [true, false]);
    assert.deepEqual(await answer.locator('td').allInnerTexts(), ['Grey', '120', 'Purple', '14']);
    assert.equal(await answer.locator('td').nth(1).evaluate((td) => getComputedStyle(td).textAlign), 'right');
    assert.equal(await answer.locator('.code-language').innerText(), 'python');
    assert.equal(await answer.locator('pre code').innerText(), 'print("herons")\n');
    assert.match(await answer.locator('blockquote').innerText(), /日本語の引用。 Arabic: مرحبا/);

    // Hostile markdown: raw HTML is text, unsafe links are not links, images are not fetched.
    const text = await answer.innerText();
    assert.ok(text.includes('<script>window.pwned'), 'a script tag is shown as text');
    assert.ok(text.includes('onerror='), 'an event attribute is shown as text');
    assert.equal(await answer.locator('script, img, iframe, div[onmouseover], [onerror], [onclick]').count(), 0);
    const hrefs = await answer.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    assert.ok(hrefs.every((href) => /^(https?:|mailto:)/i.test(href)), `only http, https and mailto open: ${hrefs}`);
    assert.equal(await answer.getByRole('link', { name: 'js', exact: true }).count(), 0);
    const tracker = answer.locator('a.image-link');
    assert.equal(await tracker.innerText(), 'tracker', 'an image is a link showing its alt text');
    // Unsafe links are plain text in their paragraph; clicking it and hovering the raw HTML does
    // nothing.
    const links = answer.locator('p').filter({ hasText: 'Links:' });
    assert.match(await links.innerText(), /js JS data javascript:alert\(1\) vb/);
    await links.click();
    await answer.locator('pre.raw-html').filter({ hasText: 'hover' }).hover();
    assert.equal(await page.evaluate(() => window.pwned), undefined, 'no script ran');
    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.deepEqual(elsewhere, [], 'no request left for another origin');

    // Reloaded, the reply is the same DOM as the settled one (R10).
    await page.reload();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    assert.equal(await html(), settled);
    assert.deepEqual(elsewhere, [], 'no request left for another origin after the reload either');
  } finally {
    await browser?.close();
    portal.stop();
    upstream.close();
  }
});
