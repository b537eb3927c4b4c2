// R1 and R2 as the reader sees them: narration one size below the answer once the turn has one,
// thinking smaller still in the faintest ink, under a "Thinking" label closed unless the reader
// opens it; in both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openPortal, shots } from './portal.mjs';

/** The computed font size (px) and colour of the first block of `role` in turn 1. */
const look = (page, role) => page.locator(`[data-turn="1"] .block.${role}`).first().evaluate((block) => {
  const style = getComputedStyle(block);
  return { size: parseFloat(style.fontSize), colour: style.color, controls: block.querySelectorAll('button, summary, [role="button"]').length };
});

/** The colour a CSS custom property resolves to on the page, in the form getComputedStyle gives. */
const ink = (page, name) => page.evaluate((name) => {
  const probe = document.createElement('span');
  probe.style.color = `var(${name})`;
  document.body.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}, name);

test('r1_r2 narration is one size below the answer, thinking smaller still in the faintest ink', { timeout: 120000 }, async () => {
  const { page, close } = await openPortal(['--demo-pace', '0.2']);
  try {
    await page.getByLabel('Message').fill('Tell me about writing systems');
    await page.keyboard.press('Enter');
    await page.locator('[data-turn="1"][data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 60000 });
    for (const theme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: theme });
      const answer = await look(page, 'answer');
      const narration = await look(page, 'narration');
      const thinking = await look(page, 'thinking');
      assert.ok(narration.size < answer.size, `R1 (${theme}): narration ${narration.size}px is below the answer's ${answer.size}px`);
      assert.ok(thinking.size < narration.size, `R2 (${theme}): thinking ${thinking.size}px is below narration's ${narration.size}px`);
      assert.equal(answer.colour, await ink(page, '--ink'), `the answer is in the main ink (${theme})`);
      assert.equal(narration.colour, await ink(page, '--ink-soft'), `R1: narration is in the soft ink (${theme})`);
      assert.equal(thinking.colour, await ink(page, '--ink-faint'), `R2: thinking is in the faintest ink (${theme})`);
      assert.equal(thinking.controls, 1, 'R2: the thinking is under one label that opens it');
      await page.screenshot({ path: join(shots, `inks-${theme}.png`) });
      const details = page.locator('[data-turn="1"] [data-testid="thinking"]').first();
      assert.equal(await details.evaluate((d) => d.open), false, 'R2: closed unless the reader opens it');
      assert.equal(await details.locator('summary').innerText(), 'Thinking');
    }
    const details = page.locator('[data-turn="1"] [data-testid="thinking"]').first();
    await details.locator('summary').click();
    assert.equal(await details.evaluate((d) => d.open), true, 'the reader may open it');
    assert.ok((await details.locator('.thinking-body').innerText()).length > 0, 'its text is there');
    await page.screenshot({ path: join(shots, 'inks-thinking-open.png') });
  } finally {
    await close();
  }
});
