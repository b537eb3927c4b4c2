// A reply followed again: after a reload mid-reply the page draws what was stored at once, plain,
// and plays out the rest (R3–R10 hold: words resolve, the caret breathes, the settled reply is the
// stored one); Stop and Send work after the reload; and an event stream cut by the network
// reconnects with Last-Event-ID and goes on without losing or repeating anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { startPortal, launchBrowser, shots } from './portal.mjs';

// The answer after the demo's tool call (text before a call is narration once the call comes, R1).
const answer = (turn) => `[data-turn="${turn}"] .tool-card ~ .block.answer .body`;
const status = (page, turn, wanted, timeout = 60000) =>
  page.locator(`[data-turn="${turn}"][data-turn-status="${wanted}"]`).waitFor({ timeout });

/** Waits until turn `turn`'s answer shows more than `length` characters. */
async function answered(page, turn, length) {
  await page.waitForFunction(
    ([selector, length]) => (document.querySelector(selector)?.textContent.length ?? 0) > length,
    [answer(turn), length],
    { timeout: 60000 },
  );
}

test('r3_r7_r8_r10 a reply reloaded mid-way goes on from what was drawn; Stop and Send work after a reload', { timeout: 240000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0.5']);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    // Each load records the answer's first drawing: its text, and how many words were resolving.
    await page.addInitScript(() => {
      window.firstDraw = null;
      new MutationObserver(() => {
        const body = document.querySelector('[data-turn="1"] .tool-card ~ .block.answer .body');
        if (body && window.firstDraw === null && body.textContent.length > 0) {
          window.firstDraw = { text: body.textContent, words: body.querySelectorAll('.w').length };
        }
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await answered(page, 1, 40);
    const shown = await page.locator(answer(1)).evaluate((b) => b.textContent);

    await page.reload();
    await page.locator(answer(1)).waitFor();
    const first = await page.evaluate(() => window.firstDraw);
    assert.ok(first.text.startsWith(shown), `what was shown is drawn again at once: ${JSON.stringify([shown, first.text])}`);
    assert.equal(first.words, 0, 'what was shown is drawn plain, with no word resolving from a blur');
    assert.equal(await page.locator('[data-turn="1"]').getAttribute('data-turn-status'), 'running');
    // The rest plays out: words resolve from their blur (R7) behind the breathing caret (R8).
    await page.locator(`${answer(1)} .w`).first().waitFor({ timeout: 30000 });
    await page.locator(`${answer(1)} .caret`).waitFor();
    await page.screenshot({ path: join(shots, 'resume-after-reload.png') });
    await status(page, 1, 'completed');
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 90000 });
    const settled = await page.locator(answer(1)).innerHTML();
    assert.ok(!settled.includes('class="w"') && !settled.includes('caret'), 'settled to plain text (R10)');
    await page.reload();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    assert.equal(await page.locator(answer(1)).innerHTML(), settled, 'nothing lost or repeated');

    // Stop after a reload: the turn is cut off, and Send works again.
    await page.getByLabel('Message').fill('Tell me more about writing systems');
    await page.keyboard.press('Enter');
    await status(page, 2, 'running');
    await page.locator('[data-turn="2"] .block').first().waitFor({ timeout: 30000 });
    await page.reload();
    await status(page, 2, 'running');
    await page.locator('[data-turn="2"]').getByTestId('cancel').click();
    await status(page, 2, 'cut_off');
    assert.equal(await page.locator('[data-turn="2"]').getByTestId('cut-off').innerText(), 'Stopped');
    await page.getByLabel('Message').fill('Please publish a note on the herons');
    await page.keyboard.press('Enter');
    await status(page, 3, 'paused');
    await page.screenshot({ path: join(shots, 'resume-stop-and-send.png'), fullPage: true });
  } finally {
    await browser?.close();
    portal.stop();
  }
});

/**
 * A loopback TCP proxy in front of `target` (host:port) that can cut the connections carrying a
 * turn's event stream, as a network drop would; it records each events request's Last-Event-ID.
 */
async function cuttableProxy(target) {
  const [host, port] = target.split(':');
  const streams = new Set();
  const resumedFrom = [];
  const server = createServer((client) => {
    const upstream = connect(Number(port), host);
    client.on('data', (data) => {
      const head = data.toString('latin1');
      if (/^GET \/api\/conversations\/[^ ]+\/events/.test(head)) {
        streams.add(client);
        resumedFrom.push(head.match(/^last-event-id: *(\d+)/im)?.[1] ?? null);
      }
      upstream.write(data);
    });
    upstream.on('data', (data) => client.write(data));
    const close = () => { client.destroy(); upstream.destroy(); streams.delete(client); };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    resumedFrom,
    cut() {
      const cut = streams.size;
      for (const socket of streams) socket.destroy();
      return cut;
    },
    close() { server.close(); },
  };
}

test('r10 an event stream cut by the network reconnects and goes on without loss or repeats', { timeout: 180000 }, async () => {
  const portal = await startPortal(['--demo-pace', '0.5']);
  const proxy = await cuttableProxy(new URL(portal.url).host);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(proxy.url);
    await page.getByTestId('model-label').waitFor();
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await answered(page, 1, 20);
    assert.equal(proxy.cut(), 1, 'the reply streams on one connection, now cut');
    await status(page, 1, 'completed', 90000);
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 90000 });
    assert.equal(proxy.resumedFrom[0], null, 'the first request reads from the start');
    assert.ok(proxy.resumedFrom.length >= 2, `the browser reconnected: ${proxy.resumedFrom}`);
    assert.ok(Number(proxy.resumedFrom[1]) > 0, `it resumed after the last event it had: ${proxy.resumedFrom}`);
    assert.equal(await page.locator('.problem').count(), 0, 'no problem was shown');
    const settled = await page.locator(answer(1)).innerHTML();
    await page.reload();
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor();
    assert.equal(await page.locator(answer(1)).innerHTML(), settled, 'nothing lost or repeated');
  } finally {
    await browser?.close();
    proxy.close();
    portal.stop();
  }
});
