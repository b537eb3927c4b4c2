// What the package's browser benches share (tests/bench/package.mjs and streamdown.mjs): a bench
// run whole (`runBench`: the stream's chunks, pages bundled with esbuild against the built package
// and served, the recorder injected into each page, the runs alternating, the table and the
// report), and what their targets are judged with. docs/bench.md ("The
// package's reply view") explains the numbers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { extname, join } from 'node:path';

import * as esbuild from 'esbuild';

import { launchBrowser, root } from '../e2e/portal.mjs';
import { readMetrics } from './metrics.mjs';
import { lcg } from './reply.mjs';
import { startTrace, topSelfThreadTime } from './trace.mjs';

/** The stall: where in the stream (a share of its duration) and how long. */
const STALL_AT = 0.4;
const STALL_MS = 2000;
/** Chunk sizes in code points. */
const CHUNK_MIN = 5;
const CHUNK_MAX = 40;
/** The recorder scrolls the live end into view this often, as a reader follows it. */
const SCROLL_EVERY_MS = 250;

const PACKAGE = join(root, 'target', 'npm', 'portal-wasm');
const TRACE = Boolean(process.env.PORTAL_BENCH_TRACE);

export const label = ({ chars, rate }) => `${chars.toLocaleString('en')} at ${rate} chars/s`;

/** The bench's `<chars>:<rate>` arguments, or 50,000 at 2,000 chars/s and 5,000 at 200. */
function conditions(args) {
  const asked = args.map((arg) => {
    const [, chars, rate] = /^(\d+):(\d+)$/.exec(arg) ?? [];
    if (!(Number(chars) > 0 && Number(rate) > 0)) throw new Error(`"${arg}" is not a run; give <chars>:<rate>, such as 5000:200`);
    return { chars: Number(chars), rate: Number(rate) };
  });
  return asked.length > 0 ? asked : [{ chars: 50_000, rate: 2000 }, { chars: 5_000, rate: 200 }];
}

/** How many times each page plays each condition: PORTAL_BENCH_REPEATS, 5 unless set. */
const REPEATS = Math.max(1, Number(process.env.PORTAL_BENCH_REPEATS ?? 5) || 1);

/**
 * The reply cut into chunks of CHUNK_MIN–CHUNK_MAX code points, each ending inside a cluster
 * (the nearest such offset to a random length) wherever its range holds one, each
 * due when its last character is due at `rate`; those due during the stall arrive together at its
 * end. Returns the chunks ([text, due ms]) and how many end inside a cluster.
 */
function chunked(reply, rate) {
  const below = lcg(0xC0FFEE);
  const boundary = new Set([reply.length]);
  const clusterAt = []; // UTF-16 offset → clusters before it
  let clusters = 0;
  for (const { index } of new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply)) {
    boundary.add(index);
    clusterAt[index] = clusters++;
  }
  clusterAt[reply.length] = clusters;
  const clustersBefore = (at) => { while (clusterAt[at] === undefined) at -= 1; return clusterAt[at]; };
  const codePointEnd = (at, count) => {
    for (let i = 0; i < count && at < reply.length; i++) at += reply.codePointAt(at) > 0xFFFF ? 2 : 1;
    return at;
  };
  const streamMs = (clusters / rate) * 1000;
  const stallFrom = streamMs * STALL_AT;
  const chunks = [];
  let inside = 0;
  for (let at = 0; at < reply.length;) {
    const wanted = codePointEnd(at, CHUNK_MIN + below(CHUNK_MAX - CHUNK_MIN + 1));
    // The offset inside a cluster nearest to the wanted end, within CHUNK_MIN–CHUNK_MAX code points.
    let end = wanted;
    for (let to = codePointEnd(at, CHUNK_MIN), n = CHUNK_MIN; n <= CHUNK_MAX && to < reply.length; n++) {
      if (!boundary.has(to) && (boundary.has(end) || Math.abs(to - wanted) < Math.abs(end - wanted))) end = to;
      to = codePointEnd(to, 1);
    }
    if (!boundary.has(end)) inside += 1;
    let due = (clustersBefore(end) / rate) * 1000;
    if (due >= stallFrom && due < stallFrom + STALL_MS) due = stallFrom + STALL_MS;
    chunks.push([reply.slice(at, end), due]);
    at = end;
  }
  return { chunks, inside, clusters };
}

// Runs in the page before its scripts: after each of the page's animation-frame callbacks, how
// much of the reply the frame shows (the page's own measure, checked against the DOM's last text
// node), and the end scrolled into view every SCROLL_EVERY_MS, as a reader following the text.
function recorder({ scrollEveryMs }) {
  const rec = { t: [], len: [], domMismatches: 0, callbacks: 0, longTasks: 0, longTaskMs: 0 };
  window.__benchRecorder = rec;
  const streaming = () => window.portalBench?.started && !window.portalBench.settled;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (!streaming()) continue;
      rec.longTasks += 1;
      rec.longTaskMs += entry.duration;
    }
  }).observe({ type: 'longtask' });
  // The last text node of the reply that is not a code block's header or a button.
  const lastText = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest('.code-head, button') || !node.data.trim()
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    let last = null;
    while (walker.nextNode()) last = walker.currentNode;
    return last?.data.trimEnd() ?? '';
  };
  const requestFrame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => requestFrame((time) => {
    try {
      callback(time);
    } finally {
      if (streaming()) {
        rec.callbacks += 1;
        const length = window.portalBench.drawnLength();
        if (rec.t.at(-1) === time) {
          rec.len[rec.len.length - 1] = length;
        } else {
          rec.t.push(time);
          rec.len.push(length);
          // Every 60 frames: the DOM's last text must be the reply's just before where the page
          // says the frame ends (markdown holds back syntax there, such as a link's address).
          if (window.portalBench.checkDom !== false && rec.t.length % 60 === 0) {
            const drawn = lastText(document.getElementById('reply')).slice(-3);
            if (!window.portalBench.reply.slice(Math.max(0, length - 80), length).includes(drawn)) rec.domMismatches += 1;
          }
        }
      }
    }
  });
  setInterval(() => {
    if (streaming()) document.scrollingElement.scrollTop = 1e9;
  }, scrollEveryMs);
}

/** `entries` (files of tests/bench/package/) bundled by esbuild into `out`, React in production. */
async function bundle(entries, out) {
  if (!existsSync(join(PACKAGE, 'package.json'))) {
    throw new Error('target/npm/portal-wasm is missing: run `cargo xtask package` first');
  }
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: entries.map((entry) => join(root, 'tests', 'bench', 'package', entry)),
    bundle: true,
    format: 'esm',
    minify: true,
    target: 'es2022',
    jsx: 'automatic',
    outdir: out,
    // The package resolves from target/npm, through its `exports` map, as it does when installed.
    nodePaths: [join(root, 'target', 'npm')],
    loader: { '.wasm': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
}

/** Serves `out`'s files, and `/?page=<script>` a page that loads one. */
function serve(out) {
  const types = { '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
  const page = (script) => `<!DOCTYPE html><html lang="en"><meta charset="utf-8">
${existsSync(join(out, `${script}.css`)) ? `<link rel="stylesheet" href="${script}.css">` : ''}
<style>body { font: 16px/1.6 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }</style>
<link rel="icon" href="data:,"><div id="reply"></div><script type="module" src="${script}.js"></script>`;
  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://localhost');
    if (url.pathname === '/') {
      response.setHeader('content-type', 'text/html');
      response.end(page(url.searchParams.get('page')));
      return;
    }
    const path = join(out, url.pathname.slice(1));
    if (!existsSync(path)) {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.setHeader('content-type', types[extname(path)] ?? 'text/plain');
    response.end(readFileSync(path));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * One run of `page` on `condition`: the stream played in a fresh tab, measured over the stream.
 * With `trace`, a Chromium trace over the whole stream prints the main thread's events by self
 * time (tracing's own cost inflates that run's numbers).
 */
async function benchRun(browser, url, page, condition, stream, { trace = false } = {}) {
  const tab = await browser.newPage({ viewport: { width: 900, height: 900 } });
  tab.on('console', (message) => { if (message.type() === 'error') console.error(`page: ${message.text()}`); });
  tab.on('pageerror', (error) => console.error(`page: ${error}`));
  const cdp = await tab.context().newCDPSession(tab);
  // The main thread's CPU time, so that other work on the machine does not inflate it.
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  await cdp.send('Runtime.enable');
  await cdp.send('Runtime.addBinding', { name: '__benchMark' });
  let end;
  const ended = new Promise((resolve) => {
    cdp.on('Runtime.bindingCalled', async ({ name, payload }) => {
      if (name === '__benchMark' && payload === 'settled') resolve(readMetrics(await cdp.send('Performance.getMetrics')));
    });
  });
  await tab.addInitScript(recorder, { scrollEveryMs: SCROLL_EVERY_MS });
  await tab.addInitScript((given) => { window.portalBenchStream = given; }, stream);
  await tab.goto(`${url}/?page=${page.entry.replace(/\.tsx?$/, '')}`);
  await tab.waitForFunction(() => window.portalBench);
  await tab.waitForTimeout(500);
  const stopTrace = trace ? await startTrace(cdp) : null;
  const start = readMetrics(await cdp.send('Performance.getMetrics'));
  await tab.evaluate(() => window.portalBench.start());
  const streamMs = stream.chunks.at(-1)[1];
  let timer;
  try {
    end = await Promise.race([ended, new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${page.name}, ${label(condition)}: the reply did not settle`)), streamMs + 60_000);
    })]);
  } finally {
    clearTimeout(timer);
  }
  if (stopTrace) {
    const events = await stopTrace();
    console.log(`bench: ${page.name}, ${label(condition)}, traced:`);
    console.log(topSelfThreadTime(events, (end.at - start.at) / 1000).join('\n'));
  }
  await tab.waitForTimeout(300);
  const result = await tab.evaluate(() => {
    const { reply, startedAt, settledAt } = window.portalBench;
    const rec = window.__benchRecorder;
    const boundary = new Uint8Array(reply.length + 1);
    for (const { index } of new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(reply)) boundary[index] = 1;
    boundary[reply.length] = 1;
    return {
      wallMs: settledAt - startedAt,
      frames: rec.t.length,
      splitFrames: rec.len.filter((length) => !boundary[length]).length,
      domMismatches: rec.domMismatches,
      longTasks: rec.longTasks,
      longTaskMs: rec.longTaskMs,
      drawnText: window.portalBench.drawnText(),
      elements: document.getElementById('reply').getElementsByTagName('*').length,
    };
  });
  await tab.close();
  const delta = (key) => end[key] - start[key];
  return {
    wallMs: Math.round(result.wallMs),
    frames: result.frames,
    scriptMs: round(delta('scriptMs'), 1),
    styleMs: round(delta('styleMs'), 1),
    layoutMs: round(delta('layoutMs'), 1),
    taskMs: round(delta('taskMs'), 1),
    busy: round(delta('taskMs') / result.wallMs, 4),
    splitFrames: result.splitFrames,
    domMismatches: result.domMismatches,
    longTasks: result.longTasks,
    longTaskMs: round(result.longTaskMs, 1),
    settledElements: result.elements,
    drawnText: result.drawnText,
  };
}

/**
 * `repeats` runs of each of `pages` on `condition`, the pages alternating (which goes first too,
 * so neither always runs on a warmer machine); each page's runs by its id. PORTAL_BENCH_TRACE=1
 * traces each page's first repeat, whose numbers are then no good for judging.
 */
async function alternate(browser, url, pages, condition, stream, repeats) {
  const runs = Object.fromEntries(pages.map(({ id }) => [id, []]));
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const order = repeat % 2 === 0 ? pages : [...pages].reverse();
    for (const page of order) {
      const run = await benchRun(browser, url, page, condition, stream, { trace: TRACE && repeat === 0 });
      console.log(`bench:   ${page.name}: script ${run.scriptMs} ms, busy ${(run.busy * 100).toFixed(2)} %, `
        + `layout ${run.layoutMs} ms, ${run.splitFrames} frames inside a character`);
      runs[page.id].push(run);
    }
  }
  return runs;
}

const round = (value, digits = 2) => Number(value.toFixed(digits));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/** The medians of a page's repeats on a condition, with the repeats kept (less their text). */
function summary(page, condition, all, stream) {
  const med = (key) => median(all.map((r) => r[key]));
  return {
    page: page.name, pageId: page.id, condition, ...stream,
    wallMs: med('wallMs'), frames: med('frames'), scriptMs: med('scriptMs'), styleMs: med('styleMs'),
    layoutMs: med('layoutMs'), taskMs: med('taskMs'), busy: med('busy'), splitFrames: med('splitFrames'),
    longTasks: med('longTasks'), longTaskMs: med('longTaskMs'), settledElements: med('settledElements'),
    repeats: all.map(({ drawnText, ...kept }) => kept),
  };
}

function table(runs) {
  const rows = [
    ['stream (first chunk → settled)', (r) => `${(r.wallMs / 1000).toFixed(1)} s`],
    ['frames drawn', (r) => r.frames],
    ['script', (r) => `${r.scriptMs} ms`],
    ['main thread busy (TaskDuration / stream)', (r) => `${(r.busy * 100).toFixed(2)} %`],
    ['main-thread tasks (TaskDuration)', (r) => `${r.taskMs} ms`],
    ['long tasks (over 50 ms)', (r) => `${r.longTasks} (${r.longTaskMs} ms)`],
    ['layout', (r) => `${r.layoutMs} ms`],
    ['style', (r) => `${r.styleMs} ms`],
    ['frames ending inside a character', (r) => r.splitFrames],
    ['settled elements', (r) => r.settledElements],
  ];
  const header = ['', ...runs.map((r) => `${r.page}, ${label(r.condition)}`)];
  const cells = [header, ...rows.map(([name, cell]) => [name, ...runs.map((r) => String(cell(r)))])];
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row) => `| ${row.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

/** The median over the repeats of `of`'s `key` over `to`'s in the same repeat. */
export function pairedRatio(of, to, key) {
  return median(of.repeats.map((run, i) => run[key] / to.repeats[i][key]));
}

/**
 * One bench: `pages` (`{ id, name, entry }`) bundled into `out` and served, each played on every
 * condition the command line names (`conditions`) REPEATS times in one browser, alternating, on
 * the reply `replyFor(condition)`
 * (`about` says what it holds, for the log). A problem is a page whose frames' drawn text did not
 * end where the page said it did, or whose settled text differs between repeats (and between
 * pages too when `samePagesText`). Writes target/bench/`name` and returns the report, its
 * targets judged by `targets(runs)`.
 */
export async function runBench({ name, pages, out, replyFor, about, samePagesText, targets }) {
  await bundle(pages.map(({ entry }) => entry), out);
  const server = await serve(out);
  const url = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchBrowser();
  try {
    const runs = [];
    const problems = [];
    for (const condition of conditions(process.argv.slice(2))) {
      const reply = replyFor(condition);
      const { chunks, inside, clusters } = chunked(reply, condition.rate);
      console.log(`bench: ${label(condition)}${about}: ${chunks.length} chunks, ${inside} ending inside a character, `
        + `a ${STALL_MS / 1000} s stall ${Math.round(STALL_AT * 100)} % in; ${pages.map((p) => p.name).join(' and ')}, `
        + `${REPEATS} repeats…`);
      const played = await alternate(browser, url, pages, condition, { reply, chunks }, REPEATS);
      if (samePagesText && new Set(Object.values(played).flat().map((r) => r.drawnText)).size !== 1) {
        problems.push(`${label(condition)}: the settled text differs between pages or repeats`);
      }
      for (const page of pages) {
        const all = played[page.id];
        if (new Set(all.map((r) => r.drawnText)).size !== 1) {
          problems.push(`${page.name}, ${label(condition)}: the settled text differs between repeats`);
        }
        if (all.some((r) => r.domMismatches > 0)) {
          problems.push(`${page.name}, ${label(condition)}: a frame's drawn text did not end where the page said it did`);
        }
        runs.push(summary(page, condition, all, { clusters, chunks: chunks.length, chunksInside: inside }));
      }
    }
    return writeReport(name, browser, runs, targets(runs), problems);
  } finally {
    await browser.close();
    server.close();
  }
}

/**
 * Writes target/bench/`name` (JSON): the runs, their targets and the problems found, with the
 * browser and the machine they ran on; prints the table and returns the report.
 */
function writeReport(name, browser, runs, targets, problems) {
  const report = {
    date: new Date().toISOString(),
    chromium: browser.version(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, loadAverage: loadavg().map((l) => round(l)) },
    runs,
    targets,
    problems,
  };
  mkdirSync(join(root, 'target', 'bench'), { recursive: true });
  writeFileSync(join(root, 'target', 'bench', name), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${table(runs)}\n`);
  return report;
}

/** Prints each target with whether it was met, and the problems; whether all were met. */
export function printVerdict(report, name) {
  for (const { target, met } of report.targets) console.log(`${met ? 'met   ' : 'MISSED'}  ${target}`);
  for (const problem of report.problems) console.log(`PROBLEM ${problem}`);
  console.log(`\nbench: wrote ${join('target', 'bench', name)}`);
  return report.targets.every((t) => t.met) && report.problems.length === 0;
}
