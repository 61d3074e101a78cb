// The GPU figures over time, from the history store (/api/v1/history/gpus) or, live and
// without a store, from the in-memory per-second series (/api/v1/series) plus each new
// sampling pass (/api/v1/gpus). Values are kept as {t (Unix s), gpu, util, sm, tensor, mem,
// power, temp}, the GPM activities (sm, tensor) in percent like utilization.
// And, for a machine without a GPU, the traced calls per second from the same series.

export const FIGURES = [
  // minSpan: the least height of the axis (a flat 0 reads 0, 20, 40... not 0, 0.2...).
  { key: 'util', title: 'GPU utilization', unit: '%', minSpan: 100 },
  // GPM's activities beside it (percent; none on a GPU without GPM): how much computed.
  { key: 'sm', title: 'SM active', unit: '%', minSpan: 100 },
  { key: 'tensor', title: 'Tensor active', unit: '%', minSpan: 100 },
  { key: 'mem', title: 'GPU memory used', unit: 'bytes', minSpan: 1024 ** 3 },
  // Not in the per-second series: known at the store's steps and at each pass only, so
  // their lines join the points across the seconds between (sparse).
  { key: 'power', title: 'Power', unit: 'W', sparse: true, minSpan: 10 },
  { key: 'temp', title: 'Temperature', unit: '°C', sparse: true, minSpan: 10 },
];

// A GPM ratio (0..1) in percent; null stays null.
const pct = (ratio) => (ratio == null ? null : ratio * 100);

// GPUs are named by index; by node and index only when the store holds several nodes.
export function fromHistory(doc) {
  const points = doc?.points ?? [];
  const nodes = new Set(points.map((p) => p.node));
  return points.map((p) => ({
    t: p.t_ns / 1e9,
    gpu: nodes.size > 1 ? `${p.node}/${p.gpu}` : String(p.gpu),
    util: p.utilization_mean_percent,
    sm: pct(p.sm_active_mean),
    tensor: pct(p.tensor_active_mean),
    mem: p.memory_used_mean_bytes,
    power: p.power_mean_watts,
    temp: p.temperature_max_celsius,
  }));
}

export function fromSeries(doc) {
  const out = [];
  for (const p of doc?.points ?? []) {
    for (const g of p.gpus ?? []) out.push({ t: p.t, gpu: String(g.gpu), util: g.util, sm: pct(g.sm_active), tensor: pct(g.tensor_active), mem: g.memory_used_bytes, power: null, temp: null });
  }
  return out;
}

export function fromPass(doc) {
  const t = (doc?.time_ns ?? 0) / 1e9;
  return (doc?.gpus ?? []).map((g) => ({
    t,
    gpu: String(g.index),
    util: g.utilization_gpu_percent ?? null,
    sm: pct(g.gpm?.sm_active),
    tensor: pct(g.gpm?.tensor_active),
    mem: g.memory_used_bytes ?? null,
    power: g.power_usage_milliwatts != null ? g.power_usage_milliwatts / 1000 : null,
    temp: g.temperature_gpu_celsius ?? null,
  }));
}

// Columns for uPlot: the sorted times, the GPU names and, per figure, one array per GPU
// (null where a GPU has no value at that time).
export function toColumns(points) {
  const times = [...new Set(points.map((p) => p.t))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const gpus = [...new Set(points.map((p) => p.gpu))].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const gi = new Map(gpus.map((g, i) => [g, i]));
  const figures = {};
  for (const f of FIGURES) figures[f.key] = gpus.map(() => new Array(times.length).fill(null));
  for (const p of points) {
    const i = index.get(p.t);
    const g = gi.get(p.gpu);
    for (const f of FIGURES) if (p[f.key] != null) figures[f.key][g][i] = p[f.key];
  }
  return { times, gpus, figures };
}

// Keeps the points of the last `windowS` seconds before `now`, merging new ones (a
// pass's point replaces a series point of the same GPU and second).
export function mergePoints(old, fresh, now, windowS) {
  const key = (p) => `${p.gpu}@${Math.floor(p.t)}`;
  const map = new Map(old.map((p) => [key(p), p]));
  for (const p of fresh) {
    const k = key(p);
    const prev = map.get(k);
    map.set(k, prev ? { ...prev, ...Object.fromEntries(Object.entries(p).filter(([, v]) => v != null)), t: Math.floor(p.t) } : { ...p, t: Math.floor(p.t) });
  }
  return [...map.values()].filter((p) => p.t >= now - windowS);
}

// The series' points ({t, calls, errors, domains}) of the last `windowS` seconds before
// `now`, a newer reading of a second replacing the older (it may have been read while
// the second went on).
export function mergeCalls(old, fresh, now, windowS) {
  const map = new Map(old.map((p) => [p.t, p]));
  for (const p of fresh) map.set(p.t, { t: p.t, calls: p.calls ?? 0, errors: p.errors ?? 0, domains: p.domains ?? {} });
  return [...map.values()].filter((p) => p.t >= now - windowS).sort((a, b) => a.t - b.t);
}

// Columns for the calls chart: every second from the first to the last (a second the
// series left out had no call: 0), one line per probe domain, busiest first, and the
// errors.
export function callColumns(points) {
  if (points.length === 0) return { times: [], names: [], columns: [] };
  const first = points[0].t;
  const last = points[points.length - 1].t;
  const times = [];
  for (let t = first; t <= last; ++t) times.push(t);
  const totals = new Map();
  for (const p of points) for (const [d, n] of Object.entries(p.domains)) totals.set(d, (totals.get(d) ?? 0) + n);
  const domains = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a) || a.localeCompare(b));
  const names = [...domains, 'errors'];
  const columns = names.map(() => new Array(times.length).fill(0));
  for (const p of points) {
    const i = p.t - first;
    domains.forEach((d, j) => (columns[j][i] = p.domains[d] ?? 0));
    columns[domains.length][i] = p.errors;
  }
  return { times, names, columns };
}
