// The GPUs' row of SM, tensor and DRAM activity beside utilization: percentages, "—" with
// its reason on a GPU without GPM, "–" before GPM's first reading; and the charts' points.
import { describe, expect, it } from 'vitest';
import { fromHistory, fromPass, fromSeries } from '../src/gpu_history.js';
import { gpmActivity, gpuNowHtml, NO_GPM } from '../src/gpu_now.js';

const withGpm = { index: 0, name: 'H200', utilization_gpu_percent: 45, gpm_supported: true, gpm: { sm_active: 0.8, tensor_active: 0.6, dram_active: 0.25 } };
const without = { index: 1, name: 'A100', utilization_gpu_percent: 55, gpm_supported: false, gpm: null };

describe('GPM activity', () => {
  it('writes ratios as whole percentages', () => {
    expect(gpmActivity(withGpm, 'sm_active')).toEqual({ text: '80%', title: '' });
    expect(gpmActivity(withGpm, 'tensor_active').text).toBe('60%');
    expect(gpmActivity(withGpm, 'dram_active').text).toBe('25%');
    expect(gpmActivity({ ...withGpm, gpm: { sm_active: 0.004 } }, 'sm_active').text).toBe('0%');
  });
  it('says why a GPU has none', () => {
    expect(gpmActivity(without, 'sm_active')).toEqual({ text: '—', title: NO_GPM });
    expect(NO_GPM).toBe('no GPM profiling counters (Hopper or newer)');
    // GPM on, but a reading needs two passes.
    expect(gpmActivity({ ...withGpm, gpm: null }, 'sm_active').text).toBe('–');
    expect(gpmActivity({ ...withGpm, gpm: { sm_active: null } }, 'sm_active').text).toBe('–');
  });
  it('puts utilization and the activities side by side, one row per GPU', () => {
    const html = gpuNowHtml({ gpus: [withGpm, without, { index: 2, lost: true }] });
    expect([...html.matchAll(/data-gpu="(\d+)"/g)].map((m) => m[1])).toEqual(['0', '1']);
    const row = (i) => html.slice(html.indexOf(`data-gpu="${i}"`)).split('</tr>')[0];
    const cell = (r, key) => r.match(new RegExp(`<td[^>]*data-key="${key}"[^>]*>([^<]*)</td>`));
    expect(cell(row(0), 'util')[1]).toBe('45%');
    expect(cell(row(0), 'sm_active')[1]).toBe('80%');
    expect(cell(row(0), 'tensor_active')[1]).toBe('60%');
    expect(cell(row(0), 'dram_active')[1]).toBe('25%');
    expect(cell(row(1), 'sm_active')[1]).toBe('—');
    expect(cell(row(1), 'sm_active')[0]).toContain(`title="${NO_GPM}"`);
    expect(gpuNowHtml({ gpus: [] })).toBe('');
  });
  it('charts the activities in percent from the series, a pass and the store', () => {
    const series = { points: [{ t: 10, gpus: [{ gpu: 0, util: 45, sm_active: 0.8, tensor_active: 0.6 }, { gpu: 1, util: 55, sm_active: null, tensor_active: null }] }] };
    const [g0, g1] = fromSeries(series);
    expect([g0.sm, g0.tensor]).toEqual([80, 60]);
    expect([g1.sm, g1.tensor]).toEqual([null, null]);
    const [p0, p1] = fromPass({ time_ns: 10e9, gpus: [withGpm, without] });
    expect([p0.util, p0.sm, p0.tensor]).toEqual([45, 80, 60]);
    expect(p1.sm).toBe(null);
    expect(fromHistory({ points: [{ node: 'a', gpu: 0, t_ns: 1, sm_active_mean: 0.5 }] })[0].sm).toBe(50);
  });
});
