// A CPU profile of the page while the bench streams, for finding what a frame costs. Asked for
// with PORTAL_BENCH_PROFILE=1: each run's first repeat is profiled (the profiler's own cost makes
// that repeat's numbers no good for judging), its profile written to
// target/bench/<run>.cpuprofile (open it in Chromium's DevTools) and the functions with the most
// self time printed. A build that keeps the wasm's function names makes them readable:
// DEVELOPERS.md, "Profiling the page".

const SAMPLING_INTERVAL_US = 100;
const TOP = 30;

/** Starts the profiler of the page behind `cdp`; the returned function stops it and reports. */
export async function startProfile(cdp) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  await cdp.send('Profiler.start');
  return async () => (await cdp.send('Profiler.stop')).profile;
}

/** The functions with the most self time in `profile`, as printable lines. */
export function topSelfTime(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const self = new Map();
  let total = 0;
  for (const [id, count] of counts) {
    const { functionName, url } = byId.get(id).callFrame;
    const name = functionName || `(anonymous ${url.split('/').pop()})`;
    if (name === '(idle)' || name === '(program)') continue;
    self.set(name, (self.get(name) ?? 0) + count);
    total += count;
  }
  const ms = (count) => ((count * SAMPLING_INTERVAL_US) / 1000).toFixed(1);
  return [
    `${ms(total)} ms sampled outside idle, top ${TOP} by self time:`,
    ...[...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)
      .map(([name, count]) => `${ms(count).padStart(8)} ms ${((count / total) * 100).toFixed(1).padStart(5)} %  ${name.slice(0, 110)}`),
  ];
}
