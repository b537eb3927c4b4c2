// The page's main-thread times from the Chrome DevTools Protocol, read the same way by every
// browser bench: a `Performance.getMetrics` answer in milliseconds.

/** The times in a `Performance.getMetrics` answer, in ms; `at` is since the page's navigation. */
export function readMetrics({ metrics }) {
  const value = (name) => metrics.find((m) => m.name === name)?.value ?? 0;
  return {
    at: (value('Timestamp') - value('NavigationStart')) * 1000,
    scriptMs: value('ScriptDuration') * 1000,
    styleMs: value('RecalcStyleDuration') * 1000,
    layoutMs: value('LayoutDuration') * 1000,
    taskMs: value('TaskDuration') * 1000,
  };
}
