// The package's browser bench (issue 33): the npm package as a front-end team uses it, on pages
// bundled with esbuild against the built package (target/npm/portal-wasm, `cargo xtask package`)
// and played in headless Chromium, side by side in one run:
//
// - `README loop`: wasm-pkg/npm/README.md's "Markdown while a reply plays out" exactly, Playout
//   and StreamingMarkdown with each block the update names drawn again whole
//   (tests/bench/package/readme-loop.ts);
// - `ReplyView`: the package's class with its style sheet (tests/bench/package/reply-view.ts).
//
// Each condition streams a markdown reply (tests/bench/reply.mjs) at a rate in characters a
// second, in chunks of 5–40 code points that end inside a grapheme cluster wherever one is near,
// with a 2 s stall 40 % of the way through and then a burst of what was due meanwhile. Each run is
// repeated PORTAL_BENCH_REPEATS times (default 5), the two pages alternating, each in a fresh page;
// the table shows medians, and the targets are judged on the median of the repeats' own ratios.
// Writes target/bench/package.json, prints a table and exits non-zero when a target is missed. docs/bench.md ("The package's reply view") explains the numbers.
//
// Usage: node tests/bench/package.mjs [<chars>:<rate> ...]   (default 50000:2000 5000:200)
// PORTAL_BENCH_PAGES=loop (or class) runs one page only, for work in progress (no targets then).

import { join } from 'node:path';

import { root } from '../e2e/portal.mjs';
import {
  label, pairedRatio, printVerdict, runBench,
} from './pages.mjs';
import { markdownReply } from './reply.mjs';

const PAGES = [
  { id: 'loop', name: 'README loop', entry: 'readme-loop.ts' },
  { id: 'class', name: 'ReplyView', entry: 'reply-view.ts' },
].filter(({ id }) => !process.env.PORTAL_BENCH_PAGES || process.env.PORTAL_BENCH_PAGES === id);

const OUT = join(root, 'target', 'bench', 'package-pages');

/**
 * The targets of issue 33, the class against the loop. The two pages of one repeat run one after
 * the other, so the machine's drift (a shared machine's load moved the loop's busy between 7 % and
 * 10.5 % in one run) hits both alike: each target is judged on the median of the repeats' own
 * ratios, class over loop.
 */
function targets(runs) {
  const judged = [];
  const find = (page, rate) => runs.find((r) => r.pageId === page && r.condition.rate === rate);
  const percent = (run) => `${(run.busy * 100).toFixed(2)} %`;
  const loop200 = find('loop', 200), class200 = find('class', 200);
  if (loop200 && class200) {
    const ratio = pairedRatio(class200, loop200, 'busy');
    judged.push({
      target: `at 200 chars/s ReplyView's main thread busy ≤ half the README loop's: ${ratio.toFixed(3)} of it `
        + `(the repeats' median ratio; medians ${percent(class200)} against ${percent(loop200)})`,
      met: ratio <= 0.5,
    });
  }
  const loop2000 = find('loop', 2000), class2000 = find('class', 2000);
  if (loop2000 && class2000) {
    const ratio = pairedRatio(class2000, loop2000, 'scriptMs');
    judged.push({
      target: `at 2,000 chars/s ReplyView's script time ≤ the README loop's: ${ratio.toFixed(3)} of it `
        + `(the repeats' median ratio; medians ${class2000.scriptMs} ms against ${loop2000.scriptMs} ms)`,
      met: ratio <= 1,
    });
  }
  for (const run of runs.filter((r) => r.pageId === 'class')) {
    judged.push({
      target: `ReplyView, ${label(run.condition)}: no frame ends inside a character (${run.splitFrames})`,
      met: run.splitFrames === 0,
    });
  }
  return judged;
}

const report = await runBench({
  name: 'package.json',
  pages: PAGES,
  out: OUT,
  replyFor: (condition) => markdownReply(condition.chars),
  about: '',
  samePagesText: true,
  targets,
});
const met = printVerdict(report, 'package.json');
const missing = ['loop', 'class'].filter((id) => !PAGES.some((p) => p.id === id));
if (missing.length > 0) {
  console.log(`bench: only ${PAGES.map((p) => p.name).join(', ')} ran (PORTAL_BENCH_PAGES); the targets need both pages`);
}
if (!met || missing.length > 0) {
  console.error('bench: the package bench missed a target (above)');
  process.exit(1);
}
