// The pieces behind the pages' states: the line a part says (loading, failed, slow, with
// the data's age), an axis's labels, the anomaly rows' figures, and the request lanes.
import { describe, expect, it } from 'vitest';
import { anomalyRows } from '../src/anomalies.js';
import { laneOf } from '../src/api.js';
import { age, describe as stateOf, SLOW_MS } from '../src/feed.js';
import { bytes, tickLabels } from '../src/format.js';

describe('a part of a page', () => {
  const now = 1_000_000;
  it('loads, then keeps its data and says how old it is when a request fails or is slow', () => {
    expect(stateOf({ hasData: false, now })).toMatchObject({ state: 'loading', note: 'Loading…' });
    const busy = Object.assign(new Error('all workers busy'), { status: 503 });
    expect(stateOf({ hasData: false, error: busy, now }).note).toBe('No data yet: the agent could not answer (all workers busy). Trying again.');
    expect(stateOf({ hasData: true, updatedAt: now - 12_000, error: new TypeError('Failed to fetch'), now })).toEqual({
      state: 'failed',
      text: 'updated 12 s ago, the agent did not answer',
      note: '',
    });
    expect(stateOf({ hasData: true, updatedAt: now - 4000, pendingSince: now - SLOW_MS - 1, now }).text).toBe('updated 4 s ago, waiting for the agent');
    expect(stateOf({ hasData: true, updatedAt: now - 4000, pendingSince: now - 1000, now }).state).toBe('ready');
  });
  it('writes ages in seconds, minutes and hours', () => {
    expect(age(12_400)).toBe('12 s');
    expect(age(240_000)).toBe('4 min');
    expect(age(3 * 3600_000)).toBe('3 h');
  });
  it('queues the history store\'s routes apart from the live ones', () => {
    expect(laneOf('/api/v1/history/nodes?since=15m')).toBe('history');
    expect(laneOf('/api/v1/processes')).toBe('live');
  });
});

describe('axis labels', () => {
  it('take the fewest decimals at which no two neighbours read the same', () => {
    const pct = (v, d) => `${v.toFixed(d)}%`;
    expect(tickLabels([0, 20, 40], pct)).toEqual(['0%', '20%', '40%']);
    expect(tickLabels([0.2, 0.4, 0.6, 0.8, 1.0], pct)).toEqual(['0.2%', '0.4%', '0.6%', '0.8%', '1.0%']);
    expect(tickLabels([1024, 1536, 2048], bytes)).toEqual(['1.0 KiB', '1.5 KiB', '2.0 KiB']);
  });
});

describe('anomaly rows', () => {
  it('set a slow interval\'s mean call, not its length, beside the median', () => {
    const rows = anomalyRows({
      anomalies: [{ ts_ns: 5, pid: 7, domain: 'cuda', name: 'cudaMalloc', dur_ns: 39_200, median_ns: 1420, score: 9 }],
      intervals: [{ start_ns: 0, end_ns: 1_030_000_000, domain: 'cuda', name: 'cudaMemcpy', calls: 500, ratio: 2.4, median_ns: 1200, score: 7 }],
    });
    expect(rows[0]).toMatchObject({ kind: 'slow call', dur_ns: 39_200 });
    expect(rows[0].times).toBeCloseTo(27.6, 1);
    expect(rows[1]).toMatchObject({ kind: 'slow interval', median_ns: 1200, times: 2.4, detail: 'mean of 500 calls in 1.03 s' });
    expect(rows[1].dur_ns).toBeCloseTo(2880);
    // The agent's own mean when it sends one.
    const sent = anomalyRows({ intervals: [{ start_ns: 0, end_ns: 1e9, calls: 9, ratio: 2.4, median_ns: 1200, dur_ns: 2881 }] });
    expect(sent[0].dur_ns).toBe(2881);
  });
});

describe('failed allocations', () => {
  it('say what they count, with the ledger\'s split and the functions\' errors', async () => {
    const { failedAllocationsNote } = await import('../src/pages/process.js');
    const functions = [{ function: 'cudaMalloc', errors: 14_600 }, { function: 'cudaMallocHost', errors: 2800 }, { function: 'cudaLaunchKernel', errors: 3 }];
    const note = failedAllocationsNote(17_400, functions, { cudaMallocHost: 2800, cudaMalloc: 14_600 });
    expect(note).toMatch(/^Failed allocs: 17\.4k allocation calls that returned an error, of every allocation function \(.*\): cudaMalloc 14\.6k, cudaMallocHost 2800\. The Functions table counts each function's failed calls: cudaMalloc 14\.6k, cudaMallocHost 2800\.$/);
    expect(failedAllocationsNote(5, [])).toMatch(/as the runtime call\)\. The Functions table has no error of an allocation function yet\.$/);
  });
});
