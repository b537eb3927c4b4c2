// The browser playout bench: opens the bench page (`/?bench=<rate>[&reply=markdown]`) in headless
// Chromium for each run, lets the synthetic 50,000-character reply stream in and settle, and
// measures the frames, the main thread's work, the DOM and the lag. Writes
// target/bench/playout.json and prints a table. `cargo xtask bench` runs it; docs/bench.md
// explains every number.
//
// Usage: node tests/bench/playout.mjs [run ...]   where a run is a rate in characters a second
// (a reply of prose paragraphs) or `markdown:<rate>` (a reply of every kind of markdown block);
// the default is 200 2000 markdown:2000. Each run is repeated PORTAL_BENCH_REPEATS times (default
// 3), each time in a fresh page, and judged on the median of each number across its repeats: one
// run's slowest frames and its 1,000-character windows (16–30 frames each) vary too much on a
// shared machine to judge a target on. PORTAL_BENCH_CHARS shortens the reply, and
// PORTAL_BENCH_PROFILE=1 profiles each run's first repeat (tests/bench/profile.mjs) and
// PORTAL_BENCH_TRACE=1 traces it (tests/bench/trace.mjs), for work in progress. Needs the server
// (PORTAL_BIN, default target/debug/portal) and the Trunk build (PORTAL_DIST, default dist/).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { startPortal, launchBrowser, root } from '../e2e/portal.mjs';
import { readMetrics } from './metrics.mjs';
import { startProfile, topSelfTime } from './profile.mjs';
import { startTrace, topSelfThreadTime } from './trace.mjs';
import { markdownReply, proseReply } from './reply.mjs';

const asked = process.argv.slice(2).map((arg) => {
  const [, markdown, rate] = /^(markdown:)?(\d+)$/.exec(arg) ?? [];
  if (!(Number(rate) > 0)) throw new Error(`"${arg}" is not a run; give a rate such as 2000 or markdown:2000`);
  return { rate: Number(rate), markdown: Boolean(markdown) };
});
const planned = asked.length > 0 ? asked
  : [{ rate: 200, markdown: false }, { rate: 2000, markdown: false }, { rate: 2000, markdown: true }];
const REPEATS = Math.max(1, Number(process.env.PORTAL_BENCH_REPEATS ?? 3) || 1);
/** Profile each run's first repeat (tests/bench/profile.mjs). */
const PROFILE = Boolean(process.env.PORTAL_BENCH_PROFILE);
/** Trace each run's first repeat (tests/bench/trace.mjs), over TRACE_SECONDS from the stream's middle. */
const TRACE = Boolean(process.env.PORTAL_BENCH_TRACE);
const TRACE_SECONDS = 20;
const label = ({ rate, markdown }) => `${markdown ? 'markdown ' : ''}${rate} chars/s`;
/** How many characters (grapheme clusters) the first and the last window hold. */
const WINDOW_CHARS = 1000;
/** Lag is judged in steady streaming: after this much of the stream, until its last chunk. */
const STEADY_AFTER_MS = 1500;
/** A frame interval longer than this missed a 60 Hz vsync (16.7 ms plus 1 ms of timer jitter). */
const FRAME_BUDGET_MS = 16.7;
const FRAME_JITTER_MS = 1;
/** The DOM is counted, and the drawn text checked, every this many frames during playout. */
const DOM_EVERY_FRAMES = 120;
/** The recorder scrolls the live end into view this often, as a reader follows it. */
const SCROLL_EVERY_MS = 250;
/** The reply's length in characters (grapheme clusters). PORTAL_BENCH_CHARS shortens it for a
 * quick comparison while working; the targets are judged on the whole 50,000. */
const REPLY_CHARS = Math.max(5_000, Number(process.env.PORTAL_BENCH_CHARS ?? 50_000) || 50_000);
/** How many times over the stream the main thread's times are sampled, for the cost over the reply. */
const SERIES_POINTS = 25;

// Runs in the page before its own scripts. It records, for every frame, the frame's time and how
// much of the reply is visible, as a UTF-16 offset into the reply (read from the DOM for prose; for
// markdown, whose drawn text is not the reply's, as the page reports it), after each of the
// page's animation-frame callbacks (the live block's frames, which it also times). It does
// little per frame; its own time is summed and reported (it is part of the main thread's, which
// is CPU time and cannot be split by the page's wall clock). It also observes long tasks and
// scrolls the live end into view, as a reader following the text would.
function recorder({ windowChars, domEvery, scrollEveryMs, markdown }) {
  const rec = {
    t: [], len: [], self: [],
    callbacks: [], // [frame time, end time, duration] of each page animation-frame callback
    dom: [], // [frame time, elements, nodes, word elements]
    prefixChecks: 0, prefixMismatches: 0,
    drawnSamples: [], // markdown: the drawn text every so many frames, checked once settled
    longTasks: [],
    selfMs: 0,
    thresholds: null,
    marked: {},
  };
  window.__benchRecorder = rec;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) rec.longTasks.push([entry.startTime, entry.duration]);
  }).observe({ type: 'longtask', buffered: true });

  const mark = (name) => {
    if (rec.marked[name]) return;
    rec.marked[name] = performance.now();
    window.__benchMark?.(name);
  };
  const countDom = (time) => {
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
    let nodes = 1;
    while (walker.nextNode()) nodes += 1;
    rec.dom.push([time, document.getElementsByTagName('*').length, nodes,
      document.getElementsByClassName('w').length]);
  };
  // Paragraphs before the last one no longer change, so only the last one is read. The live text
  // may group its paragraphs in other elements. Markdown drops a paragraph's trailing spaces, so
  // each closed paragraph is found in the reply, and the live one starts after the white space
  // that follows it.
  let body = null, paragraphs = null, last = null, closedEnd = 0, frames = 0;
  const newestParagraph = () => {
    let node = body.lastElementChild;
    while (node && node.tagName !== 'P') node = node.lastElementChild;
    return node;
  };
  const visibleOffset = () => {
    const reply = window.portalBench.text;
    paragraphs ??= document.createTreeWalker(body, NodeFilter.SHOW_ELEMENT, {
      acceptNode: (node) => (node.tagName === 'P' ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP),
    });
    last ??= paragraphs.nextNode();
    const newest = newestParagraph();
    while (last && last !== newest) {
      const text = last.textContent;
      const at = reply.indexOf(text, closedEnd);
      closedEnd = (at < 0 ? closedEnd : at) + text.length;
      paragraphs.currentNode = last;
      last = paragraphs.nextNode();
    }
    if (!last) return closedEnd;
    let start = closedEnd;
    while (start < reply.length && /\s/.test(reply[start])) start += 1;
    return start + last.textContent.length;
  };
  const streaming = () => {
    const bench = window.portalBench;
    return bench && body && rec.thresholds && bench.started && !rec.marked.settled;
  };
  /** Records what frame `time` shows so far; returns the visible offset. */
  const observe = (time) => {
    const bench = window.portalBench;
    const measured = () => { bench.measureDrawn(); return bench.drawn; };
    const length = bench.settled ? bench.text.length : markdown ? measured() : visibleOffset();
    if (rec.t.at(-1) === time) {
      rec.len[rec.len.length - 1] = length;
    } else {
      rec.t.push(time);
      rec.len.push(length);
      rec.self.push(rec.selfMs);
      frames += 1;
    }
    const { firstEnd, lastStart, end } = rec.thresholds;
    if (length > 0) mark('first-start');
    if (length >= firstEnd) mark('first-end');
    if (length >= lastStart) mark('last-start');
    if (length >= end) mark('last-end');
    if (bench.settled) mark('settled');
    return length;
  };

  // Before the stream starts: the answer's body, and where the windows begin and end, in UTF-16
  // offsets.
  const prepare = () => {
    const bench = window.portalBench;
    body ??= document.querySelector('.block.text.answer .body');
    if (!bench || !body || rec.thresholds !== null) return;
    const ends = [];
    for (const { index, segment } of new Intl.Segmenter('und', { granularity: 'grapheme' })
      .segment(bench.text)) ends.push(index + segment.length);
    rec.thresholds = {
      firstEnd: ends[windowChars - 1], lastStart: ends[ends.length - windowChars - 1],
      end: bench.text.length, clusters: ends.length,
    };
  };
  const preparing = setInterval(() => {
    prepare();
    if (rec.thresholds) clearInterval(preparing);
  }, 50);
  // What frame `time` shows, after each of the page's animation-frame callbacks: the recorder
  // asks for no frames of its own, so the page draws (and pays for) only the frames it asks for.
  const afterCallback = (time) => {
    if (!streaming()) return;
    const counted = frames;
    const length = observe(time);
    const bench = window.portalBench;
    if (frames !== counted && frames % domEvery === 0 && !bench.settled) {
      countDom(time);
      // The visible text must be the reply's prefix, paragraph breaks drawn as paragraphs
      // (without the spaces that ended them). Markdown's is checked against the settled text.
      if (markdown) {
        rec.drawnSamples.push(window.__benchDrawnText(body));
      } else {
        rec.prefixChecks += 1;
        if (body.textContent !== bench.text.slice(0, length).replace(/[ \t]*\n\n/g, '')) {
          rec.prefixMismatches += 1;
        }
      }
    }
  };
  const requestFrame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) =>
    requestFrame((time) => {
      const start = performance.now();
      try {
        callback(time);
      } finally {
        const end = performance.now();
        rec.callbacks.push([time, end, end - start]);
        afterCallback(time);
        rec.selfMs += performance.now() - end;
      }
    });
  // A block's drawn text without white space or code blocks' headers (their language grows
  // with the fence's line, and their Copy button).
  window.__benchDrawnText = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest('.code-head')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    let text = '';
    while (walker.nextNode()) text += walker.currentNode.data;
    return text.replace(/\s+/g, '');
  };
  setInterval(() => {
    if (!streaming()) return;
    const start = performance.now();
    document.scrollingElement.scrollTop = 1e9;
    rec.selfMs += performance.now() - start;
  }, scrollEveryMs);
}

/** Nearest-rank percentile of numbers sorted ascending. */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const ascending = (values) => [...values].sort((a, b) => a - b);
const round = (value, digits = 2) => (value === null ? null : Number(value.toFixed(digits)));

async function benchRun(browser, url, { rate, markdown }, { profile, trace }) {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  page.on('console', (message) => { if (message.type() === 'error') console.error(`page: ${message.text()}`); });
  page.on('pageerror', (error) => console.error(`page: ${error}`));
  const cdp = await page.context().newCDPSession(page);
  // The main thread's CPU time, so that other work on the machine does not inflate it.
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  await cdp.send('Runtime.enable');
  await cdp.send('Runtime.addBinding', { name: '__benchMark' });
  const samples = {};
  let settled;
  const settledSeen = new Promise((resolve) => { settled = resolve; });
  cdp.on('Runtime.bindingCalled', async ({ name, payload }) => {
    if (name !== '__benchMark') return;
    samples[payload] = readMetrics(await cdp.send('Performance.getMetrics'));
    if (payload === 'settled') settled();
  });
  await page.addInitScript(recorder, {
    windowChars: WINDOW_CHARS, domEvery: DOM_EVERY_FRAMES, scrollEveryMs: SCROLL_EVERY_MS, markdown,
  });
  const reply = markdown ? markdownReply(REPLY_CHARS) : proseReply(REPLY_CHARS);
  await page.addInitScript((text) => { window.portalBenchReply = text; }, reply);
  await page.goto(`${url}/?bench=${rate}${markdown ? '&reply=markdown' : ''}`);
  await page.waitForFunction(() => window.__benchRecorder?.thresholds);
  const stopProfile = profile ? await startProfile(cdp) : null;
  samples.start = readMetrics(await cdp.send('Performance.getMetrics'));
  if (await page.evaluate(() => window.portalBench.started)) {
    throw new Error('the stream started before the first measurement; raise START_DELAY_MS in web/src/bench.rs');
  }
  const clusters = await page.evaluate(() => window.__benchRecorder.thresholds.clusters);
  const streamMs = (clusters / rate) * 1000;
  const series = [];
  let traced = null;
  if (trace) {
    const traceMs = Math.min(TRACE_SECONDS * 1000, streamMs / 2);
    traced = new Promise((resolve, reject) => setTimeout(async () => {
      try {
        const stop = await startTrace(cdp);
        await new Promise((wait) => setTimeout(wait, traceMs));
        console.log(topSelfThreadTime(await stop(), traceMs / 1000).join('\n'));
        resolve();
      } catch (error) {
        reject(error);
      }
    }, (streamMs - traceMs) / 2));
  }
  const sampler = setInterval(async () => {
    series.push(readMetrics(await cdp.send('Performance.getMetrics')));
  }, streamMs / SERIES_POINTS);
  let timer;
  const stalled = new Promise((_, reject) => {
    timer = setTimeout(async () => {
      const state = await page.evaluate(() => ({
        marked: window.__benchRecorder.marked, visible: window.__benchRecorder.len.at(-1),
        finished: window.portalBench.finished, settled: window.portalBench.settled,
      }));
      reject(new Error(`${label({ rate, markdown })}: the block did not settle: ${JSON.stringify(state)}`));
    }, streamMs + 60000);
  });
  try {
    await Promise.race([settledSeen, stalled]);
  } finally {
    clearTimeout(timer);
    clearInterval(sampler);
  }
  await traced;
  if (stopProfile) {
    const written = await stopProfile();
    const out = join(root, 'target', 'bench');
    mkdirSync(out, { recursive: true });
    const file = join(out, `${label({ rate, markdown }).replaceAll(' ', '-').replace('/', '')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(written));
    console.log([`bench: profiled into ${file}`, ...topSelfTime(written)].join('\n'));
  }
  await page.waitForTimeout(500);
  const result = await page.evaluate((markdown) => {
    const rec = window.__benchRecorder;
    const bench = window.portalBench;
    const body = document.querySelector('.block.text.answer .body');
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
    let nodes = 1;
    while (walker.nextNode()) nodes += 1;
    const boundary = new Uint8Array(bench.text.length + 1);
    for (const { index } of new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(bench.text)) {
      boundary[index] = 1;
    }
    boundary[bench.text.length] = 1;
    if (markdown) {
      const settledText = window.__benchDrawnText(body);
      rec.prefixChecks = rec.drawnSamples.length;
      rec.prefixMismatches = rec.drawnSamples.filter((drawn) => !settledText.startsWith(drawn)).length;
      rec.drawnSamples = [];
    }
    return {
      rec: { ...rec, splitFrames: rec.len.filter((length) => !boundary[length]).length },
      arrivals: bench.arrivals,
      settledAt: bench.settledAt,
      textLength: bench.text.length,
      settledDom: {
        elements: document.getElementsByTagName('*').length,
        nodes,
        words: document.getElementsByClassName('w').length,
        paragraphs: body.getElementsByTagName('p').length,
        spans: body.getElementsByTagName('span').length,
        plain: markdown ? null
          : body.textContent === bench.text.replace(/[ \t]*\n\n/g, '').replace(/[ \t]+$/, ''),
      },
    };
  }, markdown);
  await page.close();
  return analyse({ rate, markdown }, samples, series, result);
}

function analyse({ rate, markdown }, samples, series, { rec, arrivals, settledAt, textLength, settledDom }) {
  const firstArrival = arrivals[0][0];
  const lastArrival = arrivals[arrivals.length - 1][0];
  const streamMs = settledAt - firstArrival;
  const inStream = (t) => t >= firstArrival && t <= settledAt;

  // Frame intervals over the stream.
  const times = rec.t.filter(inStream);
  const intervals = ascending(times.slice(1).map((t, i) => t - times[i]));

  // The main thread over the stream.
  const selfAt = (at) => {
    let index = rec.t.findIndex((t) => t > at);
    if (index < 0) index = rec.t.length;
    return index === 0 ? 0 : rec.self[index - 1];
  };
  const between = (from, to) => {
    const a = samples[from], b = samples[to];
    const self = selfAt(b.at) - selfAt(a.at);
    return {
      scriptMs: b.scriptMs - a.scriptMs,
      styleMs: b.styleMs - a.styleMs,
      layoutMs: b.layoutMs - a.layoutMs,
      taskMs: b.taskMs - a.taskMs,
      recorderMs: self,
      fromMs: a.at,
      toMs: b.at,
    };
  };
  const stream = between('start', 'settled');
  const busyMs = stream.scriptMs + stream.styleMs + stream.layoutMs;

  // Script time of each frame: the page's animation-frame callbacks, summed per frame.
  const perFrame = new Map();
  for (const [time, , ms] of rec.callbacks) {
    if (inStream(time)) perFrame.set(time, (perFrame.get(time) ?? 0) + ms);
  }
  const frameScript = ascending([...perFrame.values()]);
  // The ten costliest frames and how much of the reply they showed, to find what made them so.
  const slowestFrames = [...perFrame].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([time, ms]) => {
    const index = rec.t.findLastIndex((t) => t <= time);
    return { atMs: round(time - firstArrival, 0), scriptMs: round(ms, 2), visible: index < 0 ? 0 : rec.len[index] };
  });
  const frameCallbackMs = frameScript.reduce((sum, ms) => sum + ms, 0);

  // Per-frame cost over the first and the last 1,000 characters.
  const perFrameCost = (from, to) => {
    const span = between(from, to);
    const frames = rec.callbacks.filter(([, end]) => end > span.fromMs && end <= span.toMs).length;
    const mainMs = span.scriptMs + span.styleMs + span.layoutMs;
    return {
      frames,
      scriptMsPerFrame: round(span.scriptMs / frames, 3),
      styleMsPerFrame: round(span.styleMs / frames, 3),
      layoutMsPerFrame: round(span.layoutMs / frames, 3),
      mainMsPerFrame: round(mainMs / frames, 3),
    };
  };
  const first = perFrameCost('first-start', 'first-end');
  const last = perFrameCost('last-start', 'last-end');

  // The per-frame cost between successive samples, against how much of the reply was visible.
  const visibleAt = (at) => {
    const index = rec.t.findLastIndex((t) => t <= at);
    return index < 0 ? 0 : rec.len[index];
  };
  const costOverReply = series.slice(1).flatMap((b, i) => {
    const a = series[i];
    const frames = rec.callbacks.filter(([, end]) => end > a.at && end <= b.at).length;
    if (frames === 0) return [];
    const mainMs = b.scriptMs - a.scriptMs + b.styleMs - a.styleMs + b.layoutMs - a.layoutMs;
    return [{
      visible: visibleAt(b.at),
      frames,
      scriptMsPerFrame: round((b.scriptMs - a.scriptMs) / frames, 3),
      styleMsPerFrame: round((b.styleMs - a.styleMs) / frames, 3),
      layoutMsPerFrame: round((b.layoutMs - a.layoutMs) / frames, 3),
      mainMsPerFrame: round(mainMs / frames, 3),
    }];
  });

  // Lag at the DOM: how long ago the chunk that brought the last visible character arrived.
  const arrivalOf = (length) => {
    let low = 0, high = arrivals.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (arrivals[mid][1] >= length) high = mid; else low = mid + 1;
    }
    return arrivals[low][0];
  };
  const lags = ascending(rec.t.flatMap((t, i) =>
    t >= firstArrival + STEADY_AFTER_MS && t <= lastArrival && rec.len[i] > 0
      ? [t - arrivalOf(rec.len[i])] : []));

  const during = rec.dom.filter(([t]) => inStream(t));
  // How long after each mark its metrics were sampled; a check that the two clocks agree.
  const sampleDelayMs = Object.fromEntries(Object.entries(rec.marked)
    .map(([name, at]) => [name, round(samples[name].at - at, 1)]));
  const longTasks = rec.longTasks.filter(([start]) => inStream(start));
  return {
    rate,
    markdown,
    reply: { utf16: textLength, chunks: arrivals.length },
    streamMs: round(streamMs, 0),
    arrivingMs: round(lastArrival - firstArrival, 0),
    frames: times.length,
    frameIntervalMs: {
      p50: round(percentile(intervals, 50)),
      p95: round(percentile(intervals, 95)),
      p99: round(percentile(intervals, 99)),
      max: round(intervals.at(-1) ?? null),
      over16_7: intervals.filter((d) => d > FRAME_BUDGET_MS + FRAME_JITTER_MS).length,
      over50: intervals.filter((d) => d > 50).length,
    },
    longTasks: {
      count: longTasks.length,
      totalMs: round(longTasks.reduce((sum, [, d]) => sum + d, 0), 1),
      maxMs: round(longTasks.reduce((max, [, d]) => Math.max(max, d), 0), 1),
    },
    mainThread: {
      scriptMs: round(stream.scriptMs, 1),
      styleMs: round(stream.styleMs, 1),
      layoutMs: round(stream.layoutMs, 1),
      taskMs: round(stream.taskMs, 1),
      frameCallbackMs: round(frameCallbackMs, 1),
      recorderMs: round(stream.recorderMs, 1),
      busyFraction: round(busyMs / streamMs, 4),
      taskFraction: round(stream.taskMs / streamMs, 4),
    },
    frameScriptMs: {
      p50: round(percentile(frameScript, 50), 3),
      p95: round(percentile(frameScript, 95), 3),
      p99: round(percentile(frameScript, 99), 3),
      max: round(frameScript.at(-1) ?? null, 3),
    },
    windows: { first, last, ratio: round(last.mainMsPerFrame / first.mainMsPerFrame, 3) },
    costOverReply,
    dom: {
      duringMax: {
        elements: Math.max(...during.map((d) => d[1])),
        nodes: Math.max(...during.map((d) => d[2])),
        words: Math.max(...during.map((d) => d[3])),
      },
      settled: settledDom,
    },
    sampleDelayMs,
    slowestFrames,
    longTaskStarts: longTasks.map(([start, duration]) => ({ atMs: round(start - firstArrival, 0), ms: round(duration, 1) })),
    graphemeSplitFrames: rec.splitFrames,
    prefix: { checks: rec.prefixChecks, mismatches: rec.prefixMismatches },
    lagMs: {
      frames: lags.length,
      p5: round(percentile(lags, 5), 1),
      median: round(percentile(lags, 50), 1),
      p95: round(percentile(lags, 95), 1),
    },
  };
}

/** The targets, each judged on the run it is stated for (issues 9, 15 and 16). */
function targets(runs) {
  const judged = [];
  const on = (rate, markdown, checks) => {
    const run = runs.find((r) => r.rate === rate && r.markdown === markdown);
    if (!run) return;
    for (const [target, met] of checks(run)) judged.push({ target, run: label(run), met });
  };
  const lagMet = (run) => run.lagMs.median !== null && Math.abs(run.lagMs.median - 600) <= 50;
  on(200, false, (run) => [
    ['all main-thread tasks ≤ 7 % of the stream', run.mainThread.taskFraction <= 0.07],
  ]);
  on(2000, false, (run) => [
    ['main thread busy < 10 % of the stream', run.mainThread.busyFraction < 0.1],
    ['per-frame script p99 < 1 ms', run.frameScriptMs.p99 < 1],
    ['last/first 1,000 characters per-frame cost < 1.3', run.windows.ratio < 1.3],
    ['no long tasks', run.longTasks.count === 0],
    ['no frame ends inside a grapheme cluster', run.graphemeSplitFrames === 0],
    ['no word elements after settling', run.dom.settled.words === 0 && run.dom.settled.spans === 0],
    ['lag at the DOM 600 ± 50 ms', lagMet(run)],
  ]);
  on(2000, true, (run) => [
    ['main thread busy < 15 % of the stream', run.mainThread.busyFraction < 0.15],
    ['per-frame script p99 < 2 ms', run.frameScriptMs.p99 < 2],
    ['last/first 1,000 characters per-frame cost ≤ 1.3', run.windows.ratio <= 1.3],
    ['no long tasks', run.longTasks.count === 0],
    ['no frame ends inside a grapheme cluster', run.graphemeSplitFrames === 0],
    ['no word elements after settling', run.dom.settled.words === 0],
  ]);
  return judged;
}

function table(runs) {
  const rows = [
    ['stream (first chunk → settled)', (r) => `${(r.streamMs / 1000).toFixed(1)} s`],
    ['frames', (r) => r.frames],
    ['frame interval p50 / p95 / p99', (r) => `${r.frameIntervalMs.p50} / ${r.frameIntervalMs.p95} / ${r.frameIntervalMs.p99} ms`],
    ['frames over 16.7 ms / over 50 ms', (r) => `${r.frameIntervalMs.over16_7} / ${r.frameIntervalMs.over50}`],
    ['long tasks', (r) => `${r.longTasks.count} (max ${r.longTasks.maxMs} ms)`],
    ['main thread: script / style / layout', (r) => `${r.mainThread.scriptMs} / ${r.mainThread.styleMs} / ${r.mainThread.layoutMs} ms`],
    ['main thread busy (script+style+layout)', (r) => `${(r.mainThread.busyFraction * 100).toFixed(2)} %`],
    ['all main-thread tasks', (r) => `${(r.mainThread.taskFraction * 100).toFixed(2)} %`],
    ["the recorder's own time (included)", (r) => `${r.mainThread.recorderMs} ms`],
    ['per-frame script p50 / p99 / max', (r) => `${r.frameScriptMs.p50} / ${r.frameScriptMs.p99} / ${r.frameScriptMs.max} ms`],
    ['per frame, first 1,000 chars (s+s+l)', (r) => `${r.windows.first.mainMsPerFrame} ms (${r.windows.first.frames} frames)`],
    ['per frame, last 1,000 chars (s+s+l)', (r) => `${r.windows.last.mainMsPerFrame} ms (${r.windows.last.frames} frames)`],
    ['last / first ratio', (r) => r.windows.ratio],
    ['DOM during playout: elements / nodes / .w', (r) => `${r.dom.duringMax.elements} / ${r.dom.duringMax.nodes} / ${r.dom.duringMax.words}`],
    ['DOM settled: elements / nodes / .w', (r) => `${r.dom.settled.elements} / ${r.dom.settled.nodes} / ${r.dom.settled.words}`],
    ['frames ending inside a cluster', (r) => r.graphemeSplitFrames],
    ['lag at the DOM p5 / median / p95', (r) => `${r.lagMs.p5} / ${r.lagMs.median} / ${r.lagMs.p95} ms`],
    ['machine CPU busy (all processes)', (r) => `${(r.machineBusy * 100).toFixed(0)} %`],
  ];
  const header = ['', ...runs.map(label)];
  const cells = [header, ...rows.map(([name, cell]) => [name, ...runs.map((r) => String(cell(r)))])];
  const widths = header.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row) => `| ${row.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

/**
 * One run made of its repeats: each number the median of that number across them, found by the
 * same path in each; anything else (lists, text) the first repeat's.
 */
function median(repeats) {
  const [first] = repeats;
  if (typeof first === 'number') return percentile(ascending(repeats), 50);
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  return Object.fromEntries(Object.keys(first).map((key) => [key, median(repeats.map((r) => r?.[key]))]));
}

/** CPU time, busy and in all, summed over the machine's cores (ms). */
function cpuTimes() {
  return cpus().reduce((sum, { times }) => {
    const busy = times.user + times.nice + times.sys + times.irq;
    return { busy: sum.busy + busy, total: sum.total + busy + times.idle };
  }, { busy: 0, total: 0 });
}
/** Above this share of the machine's CPU, other work competed with the bench (which takes less). */
const BUSY_MACHINE = 0.5;

const portal = await startPortal();
let browser;
try {
  browser = await launchBrowser();
  const runs = [];
  for (const plan of planned) {
    console.log(`bench: streaming ${REPLY_CHARS.toLocaleString('en')} characters of ${plan.markdown ? 'markdown' : 'prose'} at ${plan.rate} characters a second…`);
    const repeats = [];
    for (let repeat = 0; repeat < REPEATS; repeat += 1) {
      const before = cpuTimes();
      const run = await benchRun(browser, portal.url, plan, {
        profile: PROFILE && repeat === 0, trace: TRACE && repeat === 0,
      });
      const after = cpuTimes();
      run.machineBusy = round((after.busy - before.busy) / (after.total - before.total), 3);
      repeats.push(run);
    }
    runs.push({ ...median(repeats), repeats });
  }
  const report = {
    date: new Date().toISOString(),
    chromium: browser.version(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, loadAverage: loadavg().map((l) => round(l)) },
    runs,
    targets: targets(runs),
  };
  const out = join(root, 'target', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'playout.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${table(runs)}\n`);
  if (runs.some((r) => r.machineBusy > BUSY_MACHINE)) {
    console.log('note: other work competed for the CPU; frame times and intervals may be inflated\n');
  }
  if (REPLY_CHARS !== 50_000) console.log('note: a shortened reply (PORTAL_BENCH_CHARS); the targets are for 50,000 characters\n');
  for (const { target, run, met } of report.targets) {
    console.log(`${met ? 'met   ' : 'MISSED'}  ${target} (${run})`);
  }
  for (const run of runs) {
    if (run.prefix.mismatches > 0 || run.dom.settled.plain === false) {
      throw new Error(`${label(run)}: the drawn text was not the reply (see playout.json)`);
    }
  }
  console.log(`\nbench: wrote ${join(out, 'playout.json')}`);
} finally {
  await browser?.close();
  portal.stop();
}
