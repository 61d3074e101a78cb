// The GPU health events' rows: one per event, each with the processes on that GPU and the
// calls they were waiting in, or "none".
import { describe, expect, it } from 'vitest';
import { gpuEventRows } from '../src/gpu_events.js';

const doc = {
  events: [
    { ts_ns: 1e18, gpu: 1, uuid: 'GPU-1', kind: 'xid', detail: 'XID 79', count: 1,
      processes: [{ pid: 7, comm: 'trainer', rank: 3, world_size: 8, job: 'job-9',
        calls: [{ tid: 7, domain: 'nccl', name: 'ncclAllReduce', ts_ns: 1e18 - 12e9, age_ns: 12e9 }] },
      { pid: 8, comm: '<loader>', calls: [] }] },
    { ts_ns: 1e18 + 1e9, gpu: 0, uuid: 'GPU-0', kind: 'hw_slowdown', detail: 'hw_slowdown began', count: 1, processes: [] },
  ],
  total: 2,
  dropped: 0,
};

describe('GPU health events', () => {
  it('gives one row per event with its GPU, kind and detail', () => {
    const rows = gpuEventRows(doc);
    expect(rows.map((r) => [r.gpu, r.kind, r.detail])).toEqual([[1, 'xid', 'XID 79'], [0, 'hw_slowdown', 'hw_slowdown began']]);
    expect(rows[0].pids).toEqual([7, 8]);
  });
  it('names the processes on the GPU, their rank and job, and the call each was in', () => {
    const html = gpuEventRows(doc)[0].processes;
    expect(html).toContain('href="#/process/7"');
    expect(html).toContain('rank 3, job job-9');
    expect(html).toContain('<code>ncclAllReduce</code> for 12.00 s');
    expect(html).toContain('&lt;loader&gt;');
  });
  it('says none when no process was on the GPU', () => {
    expect(gpuEventRows(doc)[1].processes).toContain('none');
    expect(gpuEventRows({})).toEqual([]);
  });
});
