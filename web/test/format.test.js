import { describe, expect, it } from 'vitest';
import { bytes, count, duration, esc, percent, processName, rate, repeats } from '../src/format.js';
import { foldedToTree } from '../src/folded.js';
import { metricSum, metricValue, parseMetrics } from '../src/prom.js';
import { sortRows, filterRows } from '../src/table.js';

describe('format', () => {
  it('writes bytes in binary units', () => {
    expect(bytes(512)).toBe('512 B');
    expect(bytes(1536)).toBe('1.50 KiB');
    expect(bytes(3 * 1024 ** 3)).toBe('3.00 GiB');
    expect(bytes(null)).toBe('–');
  });
  it('writes durations from nanoseconds', () => {
    expect(duration(850)).toBe('850 ns');
    expect(duration(12_500)).toBe('12.5 µs');
    expect(duration(2_000_000)).toBe('2.00 ms');
    expect(duration(3e9)).toBe('3.00 s');
  });
  it('writes counts, rates and percentages', () => {
    expect(count(1234)).toBe('1234');
    expect(count(123456)).toBe('123k');
    expect(rate(2.25)).toBe('2.3/s');
    expect(percent(0.0123)).toBe('1.2%');
  });
  it('writes an anomaly\'s repeats as the CLI does', () => {
    expect(repeats(1, 5, 5)).toBe('1');
    expect(repeats(12, 1_000_000, 3_500_000)).toBe('12 in 2.50 ms');
    expect(repeats(3, 9, 4)).toBe('3 in 0 ns');
    expect(repeats(undefined, 0, 0)).toBe('–');
  });
  it('names a process by its comm, else its program', () => {
    expect(processName('python3', '/usr/bin/python3 x.py')).toBe('python3');
    expect(processName('', '/opt/bin/driver_loop --threads 1')).toBe('driver_loop');
    expect(processName('', '')).toBe('');
  });
  it('escapes markup', () => {
    expect(esc('<img src=x onerror="a">')).toBe('&lt;img src=x onerror=&quot;a&quot;&gt;');
  });
});

describe('folded stacks', () => {
  it('builds a tree whose values add up', () => {
    const tree = foldedToTree('p (1);a;b 3\np (1);a;c 2\np (1);d 5\nbad line\n');
    expect(tree.value).toBe(10);
    const p = tree.children[0];
    expect(p.name).toBe('p (1)');
    expect(p.children.map((c) => [c.name, c.value])).toEqual([['a', 5], ['d', 5]]);
    expect(p.children[0].children.map((c) => c.value)).toEqual([3, 2]);
  });
});

describe('prometheus text', () => {
  const text = [
    '# HELP eacgm_agent_cpu_seconds_total CPU',
    '# TYPE eacgm_agent_cpu_seconds_total counter',
    'eacgm_agent_cpu_seconds_total 12.5',
    'eacgm_process_probe_overhead_ratio{pid="42",comm="a b"} 0.004',
    'eacgm_process_probe_overhead_ratio{pid="43",comm="x\\"y"} 0.002',
  ].join('\n');
  it('reads samples with labels', () => {
    const s = parseMetrics(text);
    expect(metricValue(s, 'eacgm_agent_cpu_seconds_total')).toBe(12.5);
    expect(metricValue(s, 'eacgm_process_probe_overhead_ratio', { pid: '43' })).toBe(0.002);
    expect(s[2].labels.comm).toBe('x"y');
    expect(metricSum(s, 'eacgm_process_probe_overhead_ratio')).toBeCloseTo(0.006);
    expect(metricValue(s, 'missing')).toBeNull();
  });
});

describe('tables', () => {
  const rows = [
    { pid: 3, comm: 'b', mem: null },
    { pid: 1, comm: 'a', mem: 10 },
    { pid: 2, comm: 'c', mem: 5 },
  ];
  it('sorts numbers and text, missing values last', () => {
    expect(sortRows(rows, 'pid', 1).map((r) => r.pid)).toEqual([1, 2, 3]);
    expect(sortRows(rows, 'mem', -1).map((r) => r.pid)).toEqual([1, 2, 3]);
    expect(sortRows(rows, 'mem', 1).map((r) => r.pid)).toEqual([2, 1, 3]);
    expect(sortRows(rows, 'comm', -1).map((r) => r.comm)).toEqual(['c', 'b', 'a']);
  });
  it('filters on the given fields, case-insensitively', () => {
    expect(filterRows(rows, 'A', ['comm']).map((r) => r.pid)).toEqual([1]);
    expect(filterRows(rows, '2', ['pid', 'comm']).map((r) => r.pid)).toEqual([2]);
    expect(filterRows(rows, '', ['comm']).length).toBe(3);
  });
});
