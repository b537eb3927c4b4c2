// A Chromium trace of the page while the bench streams, for finding which of the browser's own
// steps (style, layout, shaping, paint, compositing, timers) a frame pays for. Asked for with
// PORTAL_BENCH_TRACE=1: each run's first repeat is traced over a stretch in the middle of the
// stream (tracing's own cost makes that repeat's numbers no good for judging), and the renderer
// main thread's events with the most self thread time are printed.

const CATEGORIES = [
  'toplevel', 'blink', 'cc', 'v8', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
].join(',');
const TOP = 40;

/** Starts tracing the browser behind `cdp`; the returned function stops it and gives the events. */
export async function startTrace(cdp) {
  const events = [];
  const collect = ({ value }) => events.push(...value);
  cdp.on('Tracing.dataCollected', collect);
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  return async () => {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    await complete;
    cdp.off('Tracing.dataCollected', collect);
    return events;
  };
}

/** The renderer main thread's events with the most self thread time, as printable lines. */
export function topSelfThreadTime(events, seconds) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain'
    && events.some((other) => other.pid === e.pid && other.name === 'FunctionCall'));
  if (!main) return ['trace: no renderer main thread found'];
  // Complete events (and begin/end pairs) on that thread, as [start, end, thread time, name].
  const spans = [];
  const open = [];
  for (const e of events) {
    if (e.pid !== main.pid || e.tid !== main.tid) continue;
    if (e.ph === 'X' && e.tdur !== undefined) spans.push([e.ts, e.ts + e.dur, e.tts, e.tts + e.tdur, e.name]);
    else if (e.ph === 'B' && e.tts !== undefined) open.push(e);
    else if (e.ph === 'E' && e.tts !== undefined) {
      const begin = open.pop();
      if (begin) spans.push([begin.ts, e.ts, begin.tts, e.tts, begin.name]);
    }
  }
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  // Self time: an event's thread time less that of the events nested directly inside it.
  const self = new Map();
  const count = new Map();
  const stack = [];
  const add = (name, us) => self.set(name, (self.get(name) ?? 0) + us);
  for (const span of spans) {
    while (stack.length && stack.at(-1)[1] <= span[0]) stack.pop();
    const parent = stack.at(-1);
    const thread = span[3] - span[2];
    add(span[4], thread);
    count.set(span[4], (count.get(span[4]) ?? 0) + 1);
    if (parent) add(parent[4], -thread);
    stack.push(span);
  }
  const total = [...self.values()].reduce((sum, us) => sum + Math.max(0, us), 0);
  const perSecond = (us) => (us / 1000 / seconds).toFixed(2);
  return [
    `trace: ${(total / 1000).toFixed(1)} ms of main-thread time over ${seconds.toFixed(1)} s `
      + `(${((total / 1000 / seconds / 1000) * 100).toFixed(2)} %); top ${TOP} by self thread time, ms a second:`,
    ...[...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)
      .map(([name, us]) => `${perSecond(us).padStart(8)} ms/s ${String(count.get(name)).padStart(7)}×  ${name}`),
  ];
}
