// Compaction in the browser: a few long messages fill the demo model's small window until the
// agent compacts on its own (C1); the summary being written is the divider drawing in toward a
// shimmering label, with a clock after three seconds (R11); the "Context summarised" divider opens
// to show the summary without references (R12, C12) and dims what lies above it; the composer
// refuses /compact while a turn runs (C7), and a sent /compact is drawn as a pill (R13).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

// The demo model's window, in tokens: small enough that a few long messages reach 85 % of it.
const WINDOW = '6000';
const FILLER = 'The Lisbon office needs its budget for desks, screens, rent and travel checked line by line. '.repeat(14);

async function send(page, text) {
  await page.getByLabel('Message').fill(text);
  await page.keyboard.press('Enter');
}

/** The lowest WCAG contrast ratio of any text in `locator` against the page's background
 * behind it, and the text it belongs to. Colours are read as the browser computed them. */
async function lowestContrast(locator) {
  return locator.evaluate((root) => {
    const rgb = (text) => text.match(/[\d.]+/g).slice(0, 4).map(Number);
    const luminance = ([r, g, b]) => [r, g, b]
      .map((v) => v / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
      .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
    const background = (element) => {
      for (let e = element; e; e = e.parentElement) {
        const [r, g, b, a = 1] = rgb(getComputedStyle(e).backgroundColor);
        if (a > 0) return [r, g, b];
      }
      return rgb(getComputedStyle(document.body).backgroundColor);
    };
    let lowest = { ratio: Infinity, text: '' };
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const element = node.parentElement;
      const style = getComputedStyle(element);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const [high, low] = [luminance(rgb(style.color)), luminance(background(element))].sort((x, y) => y - x);
      const ratio = (high + 0.05) / (low + 0.05);
      if (ratio < lowest.ratio) lowest = { ratio, text: node.textContent.trim().slice(0, 40) };
    }
    return lowest;
  });
}

/** The colour a locator's text is drawn in. */
const ink = (locator) => locator.evaluate((e) => getComputedStyle(e).color);

async function settled(page, turn) {
  await page.locator(`[data-turn="${turn}"][data-settled="true"]`).waitFor({ timeout: 90000 });
}

test('r11_r12_r13_c7 compaction is written with a clock, drawn as a divider over dimmed history, and /compact as a pill', async () => {
  const { portal, page, close } = await openPortal(['--demo-pace', '0.2', '--demo-window', WINDOW], {
    viewport: { width: 900, height: 1000 },
  });
  try {
    // C1: long messages until the agent compacts before a call.
    const summarising = page.getByTestId('summarising');
    let turn = 0;
    while (turn < 8) {
      turn += 1;
      await send(page, `Message ${turn}: please review the budget. ${FILLER}`);
      // A sent turn is brought into view, however far up the page was.
      await page.waitForFunction((n) => {
        const sent = document.querySelector(`[data-turn="${n}"]`);
        const top = sent?.getBoundingClientRect().top;
        return top !== undefined && top >= 0 && top < innerHeight - 200;
      }, turn);
      const writing = summarising.waitFor({ timeout: 90000 }).then(() => true);
      const done = settled(page, turn).then(() => false);
      if (await Promise.race([writing, done])) break;
    }
    assert.ok(turn >= 2 && turn < 8, `the agent compacted on message ${turn}`);

    // R11: the rules draw in toward a shimmering label; the clock shows after three seconds.
    assert.equal(await summarising.locator('.label').innerText(), 'Summarising conversation');
    assert.equal(await summarising.locator('.label').evaluate((e) => getComputedStyle(e).animationName), 'shimmer');
    assert.equal(await summarising.locator('.rule.left').evaluate((e) => getComputedStyle(e).animationName), 'draw-in');
    assert.equal(await page.getByTestId('summarising-clock').count(), 0, 'no clock in the first three seconds');
    const clock = page.getByTestId('summarising-clock');
    await clock.waitFor({ timeout: 5000 });
    assert.match(await clock.innerText(), /^0:0[3-9]$/);
    await summarising.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'compaction-writing.png') });

    // R12: the divider, closed, marked automatic.
    const divider = page.getByTestId('divider');
    await divider.waitFor({ timeout: 30000 });
    assert.equal(await summarising.count(), 0, 'the writing divider gives way to the summary');
    assert.equal(await divider.getAttribute('data-trigger'), 'auto');
    assert.match(await divider.locator('summary').innerText(), /Context summarised\s*automatic/);
    assert.equal(await divider.getByTestId('summary').isVisible(), false, 'closed at first');
    await settled(page, turn);
    await page.mouse.move(0, 0);
    await divider.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'compaction-divider-closed.png') });

    // Opened: the summary, its references taken out (C12), though the stored one has them.
    await divider.locator('summary').click();
    const shown = await divider.getByTestId('summary').innerText();
    assert.match(shown, /^Turns 1–\d+/);
    // The summary is markdown, drawn as a reply is: its sections are headings.
    assert.equal(await divider.getByTestId('summary').locator('h2').first().innerText(), 'Requests');
    assert.ok(!shown.includes('## '), 'no raw heading syntax');
    assert.ok(shown.includes('Message 1: please review the budget.'), 'requests verbatim (C8)');
    assert.ok(!shown.includes('[ref:'), 'no references on screen');
    const id = new URL(page.url()).pathname.replace(/^\/c\//, '');
    const stored = await (await fetch(`${portal.url}/api/conversations/${id}`)).json();
    const block = stored.turns.flatMap((t) => t.messages).flatMap((m) => m.blocks).find((b) => b.type === 'compaction');
    assert.equal(block.trigger, 'AUTO');
    assert.ok(block.summary.includes('[ref:'), 'the stored summary keeps its references');
    await page.screenshot({ path: join(shots, 'compaction-divider-open.png') });
    await divider.locator('summary').click();

    // R12: what lies above the newest divider is dimmed until hovered, in inks that keep AA
    // contrast in both themes (headings, code and links too).
    const first = page.locator('[data-turn="1"] .message.user');
    const newest = page.locator(`[data-turn="${turn}"] .block.text`).last();
    assert.equal(await first.evaluate((e) => e.classList.contains('dimmed')), true, 'the first message is dimmed');
    assert.notEqual(await ink(first), await ink(newest), 'in a fainter ink than the newest answer');
    for (const theme of ['light', 'dark']) {
      await page.evaluate((t) => { document.documentElement.dataset.theme = t; }, theme);
      await page.mouse.move(0, 0);
      // The inks ease for 150 ms when the theme changes; measure the colours they settle on.
      await page.waitForFunction(() => document.getAnimations().every((a) => !(a instanceof CSSTransition)));
      for (const dimmed of await page.locator('.dimmed').all()) {
        const { ratio, text } = await lowestContrast(dimmed);
        assert.ok(ratio >= 4.5, `dimmed "${text}" in the ${theme} theme: ${ratio.toFixed(2)}:1`);
      }
      await first.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, `compaction-dimmed-${theme}.png`) });
    }
    await page.evaluate(() => { delete document.documentElement.dataset.theme; });
    await first.hover();
    await page.waitForFunction((e) => getComputedStyle(e).filter === 'none', await first.elementHandle());

    // The context meter: the share in use, under the 85 % line after compaction.
    const meter = page.getByTestId('context-meter');
    await meter.waitFor();
    assert.equal(await meter.locator('.line').evaluate((e) => e.style.left), '85%');
    const used = Number(await meter.getAttribute('aria-valuenow'));
    assert.ok(used > 0 && used < 85, `the meter shows ${used} %`);

    // C7: the composer refuses /compact while a turn runs, keeping the draft.
    await send(page, 'One more short question about the budget');
    turn += 1;
    await page.locator(`[data-turn="${turn}"][data-turn-status="running"]`).waitFor();
    await send(page, '/compact keep the Lisbon figures');
    assert.match(await page.getByRole('alert').innerText(), /\/compact cannot run while the latest turn is running/);
    assert.equal(await page.getByLabel('Message').inputValue(), '/compact keep the Lisbon figures');
    await settled(page, turn);

    // R13: once the turn ended, /compact is sent and drawn as the pill and its instructions.
    await page.keyboard.press('Enter');
    turn += 1;
    const pill = page.locator(`[data-turn="${turn}"]`).getByTestId('compact-pill');
    await pill.waitFor();
    assert.equal(await pill.locator('.pill').innerText(), 'Compact');
    assert.equal(await pill.locator('.instructions').innerText(), 'keep the Lisbon figures');
    assert.ok(!(await pill.innerText()).includes('/compact'), 'the typed command is not shown');
    const manual = page.locator(`[data-turn="${turn}"]`).getByTestId('divider');
    await manual.waitFor({ timeout: 30000 });
    assert.equal(await manual.getAttribute('data-trigger'), 'manual');
    assert.equal(await manual.locator('.automatic').count(), 0);
    assert.equal(await page.locator(`[data-turn="${turn}"] .message.user.dimmed`).count(), 0,
      'the pill opening the newest divider is not dimmed');
    await settled(page, turn);
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(shots, 'compact-pill.png') });

    // A reload draws the same dividers from the stored blocks.
    await page.reload();
    await page.getByTestId('divider').nth(1).waitFor();
    assert.equal(await page.getByTestId('compact-pill').count(), 1);
    assert.equal(await page.getByTestId('divider').count(), 2);
  } finally {
    await close();
  }
});

test('r14 reduced motion: the summary being written neither shimmers nor draws in', async () => {
  const { page, close } = await openPortal(['--demo-pace', '0', '--demo-window', WINDOW], { reducedMotion: 'reduce' });
  try {
    await send(page, 'Plan the Lisbon budget');
    await settled(page, 1);
    await send(page, '/compact');
    await page.getByTestId('divider').waitFor({ timeout: 30000 });
    const label = await page.evaluate(() => {
      const probe = document.createElement('span');
      probe.className = 'label shimmer';
      document.body.append(probe);
      const style = getComputedStyle(probe).animationName;
      probe.remove();
      return style;
    });
    assert.equal(label, 'none');
  } finally {
    await close();
  }
});
