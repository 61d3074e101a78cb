// The job report as the pages show it: the job page's address, the idle list's order,
// each figure with its unit and basis, and the fields on where the time went.
import { describe, expect, it } from 'vitest';
import { energy, gpuHours, money, stretch } from '../src/format.js';
import {
  idleRows,
  jobHref,
  capacityText,
  energyBasis,
  parseJobHash,
  ranges,
  reportFigures,
  reportPath,
  sectionHtml,
  timeSections,
} from '../src/job_report.js';

const ROW = {
  job: '81234',
  nodes: ['node-a', 'node-b'],
  gpus: 16,
  gpu_hours: 31.9,
  active_gpu_hours: 12.4,
  idle_gpu_hours: 17.6,
  unmeasured_gpu_hours: 0,
  idle_share: 0.5517,
  longest_idle_s: 7530,
  activity_basis: 'sm_active',
  tensor_active_mean: 0.31,
  memory_peak_bytes: 12 * 1024 ** 3,
  memory_capacity_bytes: 80 * 1024 ** 3,
  energy_kwh: 18.25,
  energy_basis: 'counter',
  share_basis: 'sole+sm',
  cost: 79.75,
  idle_cost: 44,
  first_ns: 1,
  last_ns: 2,
};
const DOC = { window: { tier: 'raw' }, idle_threshold: 0.05, gpu_hour_price: 2.5, currency: 'EUR', jobs: [ROW] };

describe('the report\'s units', () => {
  it('writes GPU-hours, energy, money and stretches', () => {
    expect(gpuHours(31.9)).toBe('31.90 GPU-h');
    expect(gpuHours(0.0125)).toBe('0.013 GPU-h');
    expect(gpuHours(0)).toBe('0.00 GPU-h');
    expect(energy(18.25)).toBe('18.25 kWh');
    expect(energy(0.0042)).toBe('4.20 Wh');
    expect(energy(null)).toBe('–');
    expect(money(44, 'EUR')).toBe('44.00 EUR');
    expect(money(3.5, '')).toBe('3.50');
    expect(stretch(7530)).toBe('2h05m');
    expect(stretch(2700)).toBe('45m');
    expect(stretch(30.9)).toBe('30s');
  });
});

describe('the job page\'s address', () => {
  it('carries the job (escaped) and a window other than the default', () => {
    expect(jobHref('81234')).toBe('#/job/81234');
    expect(jobHref('team-a/notebook-0', '7d')).toBe('#/job/team-a%2Fnotebook-0?since=7d');
    expect(parseJobHash('#/job/team-a%2Fnotebook-0?since=7d')).toEqual({ job: 'team-a/notebook-0', window: '7d' });
    expect(parseJobHash('#/job/81234')).toEqual({ job: '81234', window: '24h' });
    expect(parseJobHash('#/job/81234?since=99y')).toEqual({ job: '81234', window: '24h' });
    expect(parseJobHash('#/job/%E0%A4%A')).toBeNull();
    expect(parseJobHash('#/fleet')).toBeNull();
  });
  it('asks the report for every job, a job or a pod', () => {
    expect(reportPath('24h')).toBe('/api/v1/history/report?since=24h');
    expect(reportPath('30d', 'job', 'a b')).toBe('/api/v1/history/report?since=30d&job=a%20b');
    expect(reportPath('1h', 'pod', 'ns/p')).toBe('/api/v1/history/report?since=1h&pod=ns%2Fp');
  });
  it('writes ranks as ranges', () => {
    expect(ranges([0, 1, 2, 3, 5, 7, 8])).toBe('0-3,5,7-8');
    expect(ranges([])).toBe('');
  });
});

describe('the idle list', () => {
  it('lists the jobs that held GPUs idle, most idle cost first, then most idle GPU-hours', () => {
    const rows = idleRows({
      jobs: [
        { job: 'busy', nodes: ['a'], idle_gpu_hours: 0, idle_cost: 0 },
        { job: 'cheap', nodes: ['a'], idle_gpu_hours: 9, idle_cost: 1 },
        { job: 'dear', nodes: ['a', 'b'], idle_gpu_hours: 2, idle_cost: 30 },
        { job: 'ns/pod', nodes: ['b'], idle_gpu_hours: 3, idle_cost: 1 },
      ],
    });
    expect(rows.map((r) => r.job)).toEqual(['dear', 'cheap', 'ns/pod']);
    expect(rows[0]).toMatchObject({ node_count: 2, nodes_text: 'a, b', href: '#/job/dear' });
    expect(rows[2].href).toBe('#/job/ns%2Fpod');
    expect(idleRows(null)).toEqual([]);
  });
});

describe('a job\'s figures', () => {
  it('say each unit and basis', () => {
    const f = Object.fromEntries(reportFigures(ROW, DOC).map((x) => [x.key, x]));
    expect(f.gpus).toMatchObject({ value: '16', note: 'on 2 nodes' });
    expect(f.gpu_hours.value).toBe('31.90 GPU-h');
    expect(f.active_gpu_hours.note).toMatch(/SM activity \(GPM\)/);
    expect(f.idle_gpu_hours).toMatchObject({ value: '17.60 GPU-h', note: '55.2% of held time, activity under 5%', bad: true });
    expect(f.longest_idle_s.value).toBe('2h05m');
    expect(f.tensor_active_mean.value).toBe('31.0%');
    expect(f.memory).toMatchObject({ value: '12.0 GiB', note: 'of 80.0 GiB (15%): its processes on one GPU together' });
    expect(f.energy_kwh).toMatchObject({ value: '18.25 kWh', note: 'the GPUs\' energy counters; shared GPUs split by SM share' });
    expect(energyBasis('counter+power', 'sole')).toBe('energy counters, mean power × time where none; its processes alone on their GPUs');
    expect(energyBasis('power', 'sm+equal')).toBe('mean power × time; shared GPUs split by SM share or equally');
    expect(energyBasis('none', 'none')).toBe('no energy measured');
    expect(f.cost).toMatchObject({ value: '79.75 EUR', note: '2.50 EUR per GPU-hour' });
    expect(f.idle_cost).toMatchObject({ value: '44.00 EUR', bad: true });
  });
  it('say what is unknown: no GPM, no price, no capacity', () => {
    const row = { ...ROW, activity_basis: 'utilization', tensor_active_mean: null, memory_capacity_bytes: null, idle_share: 0.1, unmeasured_gpu_hours: 0.5 };
    const f = Object.fromEntries(reportFigures(row, { ...DOC, gpu_hour_price: 0, currency: '' }).map((x) => [x.key, x]));
    expect(f.active_gpu_hours.note).toBe('held time × NVML utilization (no GPM), 0.50 GPU-h unmeasured');
    expect(f.tensor_active_mean).toMatchObject({ value: '–', note: 'no GPM on its GPUs' });
    expect(f.memory.note).toBe('capacity unknown: its processes on one GPU together');
    expect(f.cost.note).toBe('no price set ([report] gpu_hour_price)');
    expect(f.idle_gpu_hours.bad).toBe(false);
    expect(capacityText(null, 1)).toBe('capacity unknown');
  });
});

describe('where the time went', () => {
  const TIME = {
    wall_s: 7200,
    wall_basis: 'process_life',
    processes: 2,
    host_wait_s: 1440,
    host_wait_share: 0.2,
    host_waits: [{ kind: 'sync', calls: 120_000, seconds: 1000, share: 0.1389, estimated: true }, { kind: 'data<loader>', calls: 40, seconds: 440, share: 0.0611, estimated: false }],
    gpu_time_measured: true,
    gpu_s: 3000,
    gpu_timed_launches: 2_000_000,
    nccl_gpu_s: 600,
    nccl_share: 0.2,
    nccl_timed_launches: 5000,
    top_kernels: [{ name: 'gemm<1>', launches: 900_000, timed: 900_000, gpu_s: 1800, share: 0.6 }],
  };
  it('shows nothing for a row without them', () => {
    expect(timeSections(ROW)).toEqual([]);
    expect(timeSections({ ...ROW, time: null })).toEqual([]);
  });
  it('shows host waits by kind, the GPU time with NCCL\'s part and the top kernels', () => {
    const s = timeSections({ ...ROW, time: TIME });
    expect(s.map((x) => x.key)).toEqual(['host_waits', 'nccl_gpu', 'top_kernels']);
    expect(s[0].facts).toEqual([
      ['Wall time', '2h00m (its processes\' lives, added up), 2 processes'],
      ['Waiting on the host', '1440.00 s, 20.0% of the wall time'],
    ]);
    expect(s[0].tables[0].rows).toEqual([
      ['sync', '~120k', '1000.00 s', '13.9%'],
      ['data<loader>', '40', '440.00 s', '6.1%'],
    ]);
    expect(s[1].facts).toEqual([
      ['GPU time', '3000.00 s over 2.00M timed launches'],
      ['NCCL on the GPU', '600.00 s, 20.0% of the GPU time (5000 timed launches)'],
    ]);
    expect(s[2].tables[0].rows).toEqual([['gemm<1>', '900k', '900k', '1800.00 s', '60.0%']]);
    const html = sectionHtml(s[2]);
    expect(html).toContain('gemm&lt;1&gt;');
    expect(html).not.toContain('gemm<1>');
  });
  it('says when the GPU time was not measured, and leaves out what is absent', () => {
    const s = timeSections({ time: { wall_s: 10, host_wait_s: 0, host_wait_share: 0, host_waits: [], gpu_time_measured: false, gpu_s: null, top_kernels: [] } });
    expect(s.map((x) => x.key)).toEqual(['host_waits', 'nccl_gpu']);
    expect(s[0].tables).toEqual([]);
    expect(s[1].facts[0][1]).toMatch(/^not measured/);
  });
});
