// The anomalies table's rows, each with figures that compare: a slow call's duration
// against the function's median, a slow interval's mean call duration (not its length)
// against the same median, and how many times the median each is.
import { duration } from './format.js';

export const SCORE_HELP =
  'Score: how unusual the duration is. A slow call: its z-score, in standard deviations of the ' +
  'function\'s learnt log-durations, flagged above 6. A slow interval: its calls\' mean log-duration ' +
  'above the function\'s, in standard errors that include how much its intervals swing together on ' +
  'this machine, flagged above 5.';

// The rows of /api/v1/anomalies: slow calls and slow intervals.
export function anomalyRows(doc) {
  const calls = (doc.anomalies ?? []).map((a) => ({
    ...a,
    kind: a.sampled ? 'slow call (sampled)' : 'slow call',
    times: a.median_ns > 0 ? a.dur_ns / a.median_ns : null,
    detail: '',
  }));
  const intervals = (doc.intervals ?? []).map((a) => {
    // The calls' geometric mean (`dur_ns`; from an agent that did not send it, `ratio`
    // times the median they were judged against).
    const mean = a.dur_ns ?? (a.ratio != null && a.median_ns != null ? a.ratio * a.median_ns : null);
    const length = a.end_ns - a.start_ns;
    return {
      ts_ns: a.start_ns,
      kind: 'slow interval',
      pid: null,
      domain: a.domain,
      name: a.name,
      dur_ns: mean,
      median_ns: a.median_ns,
      times: a.ratio ?? null,
      score: a.score,
      repeats: null,
      detail: `mean of ${a.calls} calls in ${duration(length)}`,
    };
  });
  return [...calls, ...intervals];
}
