// The bench's synthetic stream, shared by the package benches' pages: the chunks the runner made
// (tests/bench/pages.mjs; `window.portalBenchStream`: the reply, each chunk's text and when it is
// due), delivered by timers from `start()`, and what the page reports on `window.portalBench`.

/** What the runner gives the page before its scripts run. */
interface Stream {
  reply: string;
  /** Each chunk's text and when it is due, in ms after `start()`. */
  chunks: [string, number][];
}

/** What the page reports to the runner. */
export interface Report {
  reply: string;
  started: boolean;
  /** `performance.now()` of the first chunk. */
  startedAt: number;
  /** The stream ended (the last chunk was pushed). */
  finished: boolean;
  /** The reply settled, and when (`performance.now()`). */
  settled: boolean;
  settledAt: number;
  /** How much of the reply the page has drawn, in UTF-16 code units. */
  drawnLength(): number;
  /**
   * `false` where `drawnLength` is not where the drawn text ends (Streamdown's page, whose length
   * is the text it was given): the recorder then skips its check of the DOM's last text.
   */
  checkDom?: boolean;
  /** The drawn text without white space (and without a code block's header). */
  drawnText(): string;
  start(): void;
}

declare global {
  interface Window {
    portalBenchStream: Stream;
    portalBench: Report;
    __benchMark?: (name: string) => void;
  }
}

/** The reply's element: the one both pages draw into. */
export const body = document.getElementById("reply")!;

/**
 * Reports on `window.portalBench` and, on `start()`, delivers the chunks to `push` on time (the
 * ones due together in one task, as a burst), then calls `finish`.
 */
export function stream(
  push: (chunk: string) => void,
  finish: () => void,
  drawnLength: () => number,
): Report {
  const { reply, chunks } = window.portalBenchStream;
  const report: Report = {
    reply,
    started: false,
    startedAt: 0,
    finished: false,
    settled: false,
    settledAt: 0,
    drawnLength,
    drawnText: () => drawnText(body),
    start() {
      const t0 = performance.now();
      report.started = true;
      report.startedAt = t0;
      let next = 0;
      const deliver = () => {
        const now = performance.now() - t0;
        while (next < chunks.length && chunks[next][1] <= now) push(chunks[next++][0]);
        if (next < chunks.length) {
          setTimeout(deliver, Math.max(0, chunks[next][1] - (performance.now() - t0)));
        } else {
          report.finished = true;
          finish();
        }
      };
      deliver();
    },
  };
  window.portalBench = report;
  return report;
}

/** The reply settled: mark it for the runner, which samples the main thread's times. */
export function settled(report: Report) {
  if (report.settled) return;
  report.settled = true;
  report.settledAt = performance.now();
  window.__benchMark?.("settled");
}

function drawnText(root: Element): string {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node.parentElement?.closest(".code-head, button") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  let text = "";
  while (walker.nextNode()) text += (walker.currentNode as Text).data;
  return text.replace(/\s+/g, "");
}
