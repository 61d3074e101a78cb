// The job capture's outcome as the job page says it, and the file it saves.
import { describe, expect, it } from 'vitest';
import { captureFileName, captureOutcome } from '../src/job_capture.js';

describe('job capture', () => {
  it('says per node how many ranks were captured, and why the others were not', () => {
    const doc = {
      nodes: [
        { node: 'node-a', agent: 'http://a:9977', ranks: [{ rank: 0, pid: 1, captured: true, error: null }, { rank: 1, pid: 2, captured: true, error: null }] },
        { node: 'node-b', agent: 'http://b:9977', ranks: [{ rank: 2, pid: 3, captured: false, error: 'cannot reach the agent at http://b:9977' }, { rank: null, pid: 4, captured: false, error: 'gone' }] },
      ],
    };
    expect(captureOutcome(doc)).toEqual([
      { node: 'node-a', ok: true, text: 'node-a: 2 of 2 ranks captured' },
      { node: 'node-b', ok: false, text: 'node-b: 0 of 2 ranks captured; rank 2 not: cannot reach the agent at http://b:9977; pid 4 not: gone' },
    ]);
    expect(captureOutcome(null)).toEqual([]);
    expect(captureOutcome({ error: 'job 7: no running process' })).toEqual([]);
  });

  it('names the file by the job, with what a file system would not take replaced', () => {
    const when = new Date(Date.UTC(2026, 11, 6, 9, 30, 15, 250));
    expect(captureFileName('81723', when)).toBe('eacgm-job-81723-2026-12-06T09-30-15-250Z.json');
    expect(captureFileName('ml/run 1', when)).toBe('eacgm-job-ml_run_1-2026-12-06T09-30-15-250Z.json');
  });
});
