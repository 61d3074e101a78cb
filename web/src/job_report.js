// The job report (/api/v1/history/report, docs/job-report.md) as the pages show it: a
// job's figures, the jobs holding GPUs idle, the job page's address, and where a job's
// time went when the agent sends it.
import { bytes, count, duration, energy, esc, gpuHours, money, percent, stretch } from './format.js';

// The job page's windows; the idle list's is the default.
export const WINDOWS = ['1h', '24h', '7d', '30d'];
export const DEFAULT_WINDOW = '24h';

// A held GPU idle this share of its held time or more is shown as a waste.
export const IDLE_SHARE_BAD = 0.5;

// The job page: #/job/<job>, the window after "?since=" unless the default. A pod
// without a job is a job of the report ("namespace/pod"), so it has a page too.
export function jobHref(job, window = DEFAULT_WINDOW) {
  return `#/job/${encodeURIComponent(job)}${window !== DEFAULT_WINDOW ? `?since=${window}` : ''}`;
}

// {job, window} of a job page's address, or null.
export function parseJobHash(hash) {
  const m = /^#\/job\/([^?]+)(?:\?since=([^&]*))?$/.exec(hash);
  if (!m) return null;
  let job;
  try {
    job = decodeURIComponent(m[1]);
  } catch {
    return null;
  }
  return { job, window: WINDOWS.includes(m[2]) ? m[2] : DEFAULT_WINDOW };
}

// The report over the last `window`: every job, or one job (by "job") or pod (by "pod").
export function reportPath(window, by, value) {
  const one = by ? `&${by}=${encodeURIComponent(value)}` : '';
  return `/api/v1/history/report?since=${encodeURIComponent(window)}${one}`;
}

// "0-3,5": sorted ranks as ranges.
export function ranges(ranks) {
  const out = [];
  for (let i = 0; i < ranks.length; ) {
    let j = i;
    while (j + 1 < ranks.length && ranks[j + 1] === ranks[j] + 1) j += 1;
    out.push(j === i ? `${ranks[i]}` : `${ranks[i]}-${ranks[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

// The jobs that held GPUs idle, most idle cost first (most idle GPU-hours where there
// is no price), each with its page's address.
export function idleRows(doc) {
  return (doc?.jobs ?? [])
    .filter((j) => j.idle_gpu_hours > 0)
    .sort((a, b) => (b.idle_cost ?? 0) - (a.idle_cost ?? 0) || b.idle_gpu_hours - a.idle_gpu_hours)
    .map((j) => ({ ...j, href: jobHref(j.job), nodes_text: (j.nodes ?? []).join(', '), node_count: (j.nodes ?? []).length }));
}

// "of 80.0 GiB (15%)": a peak against its GPU's memory.
export function capacityText(peak, capacity) {
  if (peak == null || !capacity) return 'capacity unknown';
  return `of ${bytes(capacity)} (${percent(peak / capacity, 0)})`;
}

const ACTIVITY = {
  sm_active: 'SM activity (GPM)',
  utilization: 'NVML utilization (no GPM)',
  'sm_active+utilization': 'SM activity (GPM) where the GPU has it, else utilization',
  none: 'no activity measured',
};

const ENERGY = { counter: 'the GPUs\' energy counters', power: 'mean power × time', 'counter+power': 'energy counters, mean power × time where none', none: 'no energy measured' };

// What each part of the report's basis means.
export function activityBasis(basis) {
  return ACTIVITY[basis] ?? basis ?? '–';
}

const SPLIT = { sm: 'by SM share', equal: 'equally' };

export function energyBasis(basis, share) {
  const source = ENERGY[basis] ?? basis ?? '–';
  const parts = (share ?? '').split('+').filter((b) => b && b !== 'none');
  if (!parts.length) return source;
  const split = parts.filter((b) => b !== 'sole').map((b) => SPLIT[b] ?? b);
  return `${source}; ${split.length ? `shared GPUs split ${split.join(' or ')}` : 'its processes alone on their GPUs'}`;
}

// The job's figures as tiles: {key, label, value, note, bad}.
export function reportFigures(row, doc) {
  const cur = doc?.currency ?? '';
  const price = doc?.gpu_hour_price ?? 0;
  const threshold = doc?.idle_threshold;
  const unmeasured = row.unmeasured_gpu_hours > 0 ? `, ${gpuHours(row.unmeasured_gpu_hours)} unmeasured` : '';
  return [
    { key: 'gpus', label: 'GPUs', value: count(row.gpus), note: `on ${count((row.nodes ?? []).length)} node${(row.nodes ?? []).length === 1 ? '' : 's'}` },
    { key: 'gpu_hours', label: 'GPU-hours held', value: gpuHours(row.gpu_hours), note: 'a process of the job had a context on the GPU' },
    { key: 'active_gpu_hours', label: 'Active GPU-hours', value: gpuHours(row.active_gpu_hours), note: `held time × ${activityBasis(row.activity_basis)}${unmeasured}` },
    { key: 'idle_gpu_hours', label: 'Idle but held', value: gpuHours(row.idle_gpu_hours), note: `${percent(row.idle_share)} of held time${threshold != null ? `, activity under ${percent(threshold, 0)}` : ''}`, bad: (row.idle_share ?? 0) >= IDLE_SHARE_BAD },
    { key: 'longest_idle_s', label: 'Longest idle stretch', value: stretch(row.longest_idle_s), note: 'one GPU, held and idle' },
    { key: 'tensor_active_mean', label: 'Tensor activity', value: percent(row.tensor_active_mean), note: row.tensor_active_mean == null ? 'no GPM on its GPUs' : 'mean over held time (GPM)' },
    { key: 'memory', label: 'Peak GPU memory', value: bytes(row.memory_peak_bytes), note: `${capacityText(row.memory_peak_bytes, row.memory_capacity_bytes)}: its processes on one GPU together` },
    { key: 'energy_kwh', label: 'Energy', value: energy(row.energy_kwh), note: energyBasis(row.energy_basis, row.share_basis) },
    { key: 'cost', label: 'Cost', value: money(row.cost, cur), note: price > 0 ? `${money(price, cur)} per GPU-hour` : 'no price set ([report] gpu_hour_price)' },
    { key: 'idle_cost', label: 'Idle cost', value: money(row.idle_cost, cur), note: 'the idle-but-held GPU-hours', bad: row.idle_cost > 0 && (row.idle_share ?? 0) >= IDLE_SHARE_BAD },
  ];
}

// Seconds as a duration ("1.50 s", "2h05m" past an hour).
function seconds(s) {
  if (s == null) return '–';
  return s >= 3600 ? stretch(s) : duration(s * 1e9);
}

// Where a job's time went, from the row's `time` object (the agent sends it where the
// report has it): host waits by kind over the processes' traced time, the GPU time with
// NCCL's part where the hook timed it, and the top kernels. Sections {key, title, facts:
// [[label, text]], tables: [{title, labels, rows}], note}; none without `time`.
export function timeSections(row) {
  const t = row?.time;
  if (t == null || typeof t !== 'object') return [];
  const out = [];
  const waits = Array.isArray(t.host_waits) ? t.host_waits : [];
  if (t.wall_s != null || waits.length) {
    const basis = t.wall_basis === 'process_life' ? 'its processes\' lives, added up' : t.wall_basis;
    out.push({
      key: 'host_waits',
      title: 'Host waits',
      facts: [
        ['Wall time', `${seconds(t.wall_s)}${basis ? ` (${basis})` : ''}${t.processes != null ? `, ${count(t.processes)} process${t.processes === 1 ? '' : 'es'}` : ''}`],
        ['Waiting on the host', `${seconds(t.host_wait_s)}${t.host_wait_share != null ? `, ${percent(t.host_wait_share)} of the wall time` : ''}`],
      ],
      tables: waits.length
        ? [{ title: '', labels: ['Kind', 'Waits', 'Time', 'Share of wall time'], rows: waits.map((w) => [w.kind ?? '?', `${w.estimated ? '~' : ''}${count(w.calls)}`, seconds(w.seconds), percent(w.share)]) }]
        : [],
    });
  }
  if (t.gpu_time_measured != null || t.gpu_s != null) {
    const measured = t.gpu_time_measured !== false && t.gpu_s != null;
    out.push({
      key: 'nccl_gpu',
      title: 'GPU time and NCCL',
      facts: measured
        ? [
            ['GPU time', `${seconds(t.gpu_s)}${t.gpu_timed_launches != null ? ` over ${count(t.gpu_timed_launches)} timed launches` : ''}`],
            ['NCCL on the GPU', `${seconds(t.nccl_gpu_s)}${t.nccl_share != null ? `, ${percent(t.nccl_share)} of the GPU time` : ''}${t.nccl_timed_launches != null ? ` (${count(t.nccl_timed_launches)} timed launches)` : ''}`],
          ]
        : [['GPU time', 'not measured: the hook timed no kernel of this job (docs/gpu-time.md)']],
      tables: [],
    });
  }
  const kernels = Array.isArray(t.top_kernels) ? t.top_kernels : [];
  if (kernels.length) {
    out.push({
      key: 'top_kernels',
      title: 'Top kernels by GPU time',
      facts: [],
      tables: [{ title: '', labels: ['Kernel', 'Launches', 'Timed', 'GPU time', 'Share of GPU time'], rows: kernels.map((k) => [k.name ?? '?', count(k.launches), count(k.timed), seconds(k.gpu_s), percent(k.share)]) }],
    });
  }
  return out;
}

// A section as HTML (every value escaped).
export function sectionHtml(section) {
  const facts = section.facts.length
    ? `<dl class="facts">${section.facts.map(([l, t]) => `<dt>${esc(l)}</dt><dd>${esc(t)}</dd>`).join('')}</dl>`
    : '';
  const tables = section.tables
    .map((t) => `${t.title ? `<h3>${esc(t.title)}</h3>` : ''}<div class="table-wrap"><table><thead><tr>${t.labels.map((l) => `<th>${esc(l)}</th>`).join('')}</tr></thead><tbody>${t.rows
      .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
      .join('')}</tbody></table></div>`)
    .join('');
  return `<section class="card" data-section="${esc(section.key)}"><h2>${esc(section.title)}</h2>${facts}${tables}</section>`;
}
