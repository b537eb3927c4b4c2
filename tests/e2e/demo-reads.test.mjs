// The demo model shows the reading pipeline (issue 48): with a PDF and a picture attached and a
// message asking what they say, it reads the PDF with read_document (rule A3), and its reply
// quotes the document and says what the picture path handed it (rule A4). The new state is
// drawn at 390, 1280 and 1920 px in both themes and passes an axe-core scan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortal, launchBrowser, scanBoth, shots } from './portal.mjs';

// A 1×1 PNG.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const SENTENCE = 'The herons of the Tagus nest in April, in colonies of forty.';

/** A one-page PDF whose page says `text` in Helvetica, with a correct cross-reference table. */
function pdf(text) {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [5 0 R] /Count 1 /Resources << /Font << /F1 3 0 R >> >> >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>',
  ];
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

test('a3_a4 the demo reads an attached PDF with read_document and quotes it, and says what it was handed of a picture', { timeout: 180000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0']);
  const files = mkdtempSync(join(tmpdir(), 'portal-reads-'));
  let browser;
  try {
    const report = join(files, 'heron-report.pdf');
    writeFileSync(report, pdf(SENTENCE));
    const dot = join(files, 'dot.png');
    writeFileSync(dot, Buffer.from(PIXEL, 'base64'));

    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(portal.url);
    await page.getByTestId('greeting').waitFor();
    await page.getByTestId('attach').setInputFiles([report, dot]);
    await page.waitForFunction(() => {
      const chips = [...document.querySelectorAll('[data-testid="attachment-chip"][data-uploaded="true"]')];
      return chips.length === 2 && chips.every((chip) => chip.innerText.includes('Ready'));
    }, null, { timeout: 30000 });

    await page.getByLabel('Message').fill('What do these say?');
    await page.keyboard.press('Enter');
    const turn = page.locator('[data-turn="1"]');
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 60000 });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 60000 });

    const card = turn.getByTestId('tool-card');
    assert.equal(await card.count(), 1, 'one call: the PDF read once');
    assert.equal(await card.locator('.tool-name').innerText(), 'read_document');
    assert.equal(await card.getAttribute('data-state'), 'done');
    await card.locator('.tool-result summary').click();
    assert.match(await card.locator('.tool-result pre').innerText(), new RegExp(SENTENCE.replace(/[.,]/g, '\\$&')));

    const said = await turn.innerText();
    assert.ok(said.includes('I will read “heron-report.pdf” with read_document.'), said);
    assert.ok(said.includes(`I read “heron-report.pdf” with read_document. It says: “${SENTENCE}”`), said);
    assert.match(said, /I looked at the picture “dot\.png”: it reached me as image\/png of 1×1 pixels, \d+ bytes\./);

    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await card.scrollIntoViewIfNeeded();
      for (const theme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: theme });
        await page.screenshot({ path: join(shots, `demo-reads-${width}-${theme}.png`) });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    const found = await scanBoth(page, 'a document read');
    assert.deepEqual(found, [], JSON.stringify(found, null, 2));
  } finally {
    await browser?.close();
    portal.stop();
    rmSync(files, { recursive: true, force: true });
  }
});
