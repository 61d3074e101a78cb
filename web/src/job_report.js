// The job report (/api/v1/history/report, docs/job-report.md) as the pages show it: a
// job's figures, the jobs holding GPUs idle, the job page's address, and the fields on
// where a job's time went, drawn from whatever the agent sends.
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

export function energyBasis(basis, share) {
  const source = ENERGY[basis] ?? basis ?? '–';
  return share && share !== 'none' ? `${source}; shared GPUs split by ${share}` : source;
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

// The fields on where a job's time went, in the order shown, with their titles; a
// field the agent does not send is not shown.
export const TIME_FIELDS = [
  ['host_waits', 'Host waits'],
  ['nccl_gpu', 'NCCL on the GPU'],
  ['top_kernels', 'Top kernels by GPU time'],
];

// A value of those fields as read, by its name's unit: ratios and shares as
// percentages, _ns and _s as durations, _bytes as bytes, _kwh as energy.
export function fieldText(key, v) {
  if (v == null) return '–';
  if (typeof v === 'number') {
    if (/(^|_)(share|ratio|mean|fraction)$/.test(key)) return percent(v);
    if (/_ns$/.test(key)) return duration(v);
    if (/_s$/.test(key)) return duration(v * 1e9);
    if (/_bytes$/.test(key)) return bytes(v);
    if (/_kwh$/.test(key)) return energy(v);
    if (/_hours$/.test(key)) return gpuHours(v);
    return count(v);
  }
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// "gpu_time_ns" → "GPU time".
export function fieldLabel(key) {
  const words = key.replace(/_(ns|s|bytes|kwh)$/, '').split('_');
  const text = words.map((w) => (/^(gpu|nccl|sm|cpu)$/.test(w) ? w.toUpperCase() : w)).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// A list of objects as a table: {columns: [key], rows: [[text]]}.
function listTable(list) {
  const columns = [];
  for (const item of list) for (const k of Object.keys(item ?? {})) if (!columns.includes(k)) columns.push(k);
  return { columns, labels: columns.map(fieldLabel), rows: list.map((item) => columns.map((k) => fieldText(k, item?.[k]))) };
}

// The sections on where the time went that the row has: {key, title, facts: [[label,
// text]], tables: [{title, columns, labels, rows}]}.
export function timeSections(row) {
  const out = [];
  for (const [key, title] of TIME_FIELDS) {
    const v = row?.[key];
    if (v == null) continue;
    const section = { key, title, facts: [], tables: [] };
    if (Array.isArray(v)) {
      if (v.length) section.tables.push({ title: '', ...listTable(v) });
    } else if (typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (Array.isArray(x) && x.length && typeof x[0] === 'object') section.tables.push({ title: fieldLabel(k), ...listTable(x) });
        else if (x != null && !(typeof x === 'object' && !Array.isArray(x))) section.facts.push([fieldLabel(k), fieldText(k, x)]);
        else if (x != null) for (const [k2, y] of Object.entries(x)) section.facts.push([`${fieldLabel(k)}: ${fieldLabel(k2)}`, fieldText(k2, y)]);
      }
    } else {
      section.facts.push([title, fieldText(key, v)]);
    }
    if (section.facts.length || section.tables.length) out.push(section);
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
