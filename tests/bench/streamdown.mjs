// The Streamdown bench (issue 47): `<PortalReply>` from portal-wasm/react against Streamdown, the
// component front-end teams reach for, each as a React 19 page renders it for a streamed reply:
// the whole text so far passed again on every chunk, `<Streamdown isAnimating>{text}</Streamdown>`
// with streamdown/styles.css (tests/bench/package/streamdown.tsx) and
// `<PortalReply text={text} streaming>` with portal-wasm/reply.css (portal-reply.tsx). The pages
// are bundled with esbuild against the built package (`cargo xtask package`) and played in
// headless Chromium on the package bench's stream (tests/bench/pages.mjs): a markdown reply with
// fenced code, display and inline maths (tests/bench/reply.mjs), 50,000 characters at 2,000 a
// second and 5,000 at 200, in chunks cut inside grapheme clusters, with a 2 s stall and a burst.
// Each run is repeated PORTAL_BENCH_REPEATS times (default 5), the pages alternating, each in a
// fresh page. Targets: at both rates the component's main-thread task time over the stream at
// most half Streamdown's (the median of the repeats' own ratios), and no frame of the component
// ending inside a character. Writes target/bench/streamdown.json, prints a table and exits
// non-zero when a target is missed. docs/bench.md ("Streamdown and <PortalReply>") explains the
// numbers.
//
// Usage: node tests/bench/streamdown.mjs [<chars>:<rate> ...]   (default 50000:2000 5000:200)

import { join } from 'node:path';

import { root } from '../e2e/portal.mjs';
import {
  label, pairedRatio, printVerdict, runBench,
} from './pages.mjs';
import { markdownReply } from './reply.mjs';

const PAGES = [
  { id: 'streamdown', name: 'Streamdown', entry: 'streamdown.tsx' },
  { id: 'portal', name: '<PortalReply>', entry: 'portal-reply.tsx' },
];
const OUT = join(root, 'target', 'bench', 'streamdown-pages');

/**
 * The targets of issue 47, judged per rate on the median of the repeats' own ratios. Main-thread
 * busy is judged as the main thread's task time over the stream, not as its share of the stream's
 * duration: <PortalReply> plays out 0.6 s behind the stream and settles later, and a share of a
 * longer run would favour it.
 */
function targets(runs) {
  const judged = [];
  for (const { condition } of runs.filter((r) => r.pageId === 'portal')) {
    const find = (page) => runs.find((r) => r.pageId === page && r.condition === condition);
    const portal = find('portal');
    const streamdown = find('streamdown');
    const ratio = pairedRatio(portal, streamdown, 'taskMs');
    judged.push({
      target: `${label(condition)}: <PortalReply>'s main-thread task time ≤ half Streamdown's: ${ratio.toFixed(3)} of it `
        + `(the repeats' median ratio; medians ${portal.taskMs} ms against ${streamdown.taskMs} ms, `
        + `busy ${(portal.busy * 100).toFixed(2)} % against ${(streamdown.busy * 100).toFixed(2)} %)`,
      met: ratio <= 0.5,
    });
    judged.push({
      target: `<PortalReply>, ${label(condition)}: no frame ends inside a character (${portal.splitFrames})`,
      met: portal.repeats.every((r) => r.splitFrames === 0),
    });
  }
  return judged;
}

const report = await runBench({
  name: 'streamdown.json',
  pages: PAGES,
  out: OUT,
  replyFor: (condition) => markdownReply(condition.chars, { maths: true }),
  about: ' with maths and code',
  samePagesText: false,
  targets,
});
const met = printVerdict(report, 'streamdown.json');
if (!met) {
  console.error('bench: the Streamdown bench missed a target (above)');
  process.exit(1);
}
