// Numbers as people read them: bytes, durations, rates, percentages. `null` and
// `undefined` are shown as an en dash (the API's "not measured").

const DASH = '–';

// digits: the decimals to write (an axis's ticks); by default as many as the size needs.
export function bytes(n, digits) {
  if (n == null || Number.isNaN(n)) return DASH;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  const sign = n < 0 ? '-' : '';
  if (digits != null) return `${sign}${v.toFixed(digits)} ${units[i]}`;
  return `${sign}${i === 0 ? v : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ${units[i]}`;
}

export function duration(ns) {
  if (ns == null || Number.isNaN(ns)) return DASH;
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

export function count(n) {
  if (n == null || Number.isNaN(n)) return DASH;
  if (Math.abs(n) < 1e4) return Number.isInteger(n) ? String(n) : n.toFixed(1);
  const units = ['k', 'M', 'G', 'T'];
  let v = n;
  let i = -1;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)}${units[i]}`;
}

// A slow-call anomaly's repeats, as the CLI writes them: "1", or "N in D" (the flagged
// calls folded into the entry and the time from the first to the last).
export function repeats(n, firstNs, lastNs) {
  if (n == null) return DASH;
  if (n <= 1) return '1';
  return `${count(n)} in ${duration(lastNs > firstNs ? lastNs - firstNs : 0)}`;
}

export function rate(perSecond) {
  if (perSecond == null || Number.isNaN(perSecond)) return DASH;
  return `${count(perSecond < 10 ? Math.round(perSecond * 10) / 10 : Math.round(perSecond))}/s`;
}

export function percent(ratio, digits = 1) {
  if (ratio == null || Number.isNaN(ratio)) return DASH;
  return `${(ratio * 100).toFixed(digits)}%`;
}

// Unix nanoseconds as local wall-clock time.
export function clock(ns) {
  if (ns == null) return DASH;
  return new Date(ns / 1e6).toLocaleTimeString();
}

// HTML-escapes text for innerHTML templates: every value from the API (command lines,
// kernel names) comes from traced processes.
export function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// A process's name: its comm, or (always-on counts carry none) its command line's program.
export function processName(comm, cmdline) {
  if (comm) return comm;
  const program = String(cmdline ?? '').split(' ')[0];
  return program ? program.slice(program.lastIndexOf('/') + 1) : '';
}

// An axis's tick labels: `fmt(value, digits)` with the fewest decimals (0 to 4) at which
// no two neighbouring ticks read the same ("0% 0% 1% 1%" is not an axis).
export function tickLabels(values, fmt) {
  let labels = [];
  for (let digits = 0; digits <= 4; ++digits) {
    labels = values.map((v) => fmt(v, digits));
    if (labels.every((l, i) => i === 0 || l !== labels[i - 1])) return labels;
  }
  return labels;
}

// GPU-hours as the report writes them: two decimals, three under a tenth.
export function gpuHours(h) {
  if (h == null || Number.isNaN(h)) return DASH;
  return `${h.toFixed(h !== 0 && Math.abs(h) < 0.1 ? 3 : 2)} GPU-h`;
}

// Energy in kWh; Wh under one.
export function energy(kwh) {
  if (kwh == null || Number.isNaN(kwh)) return DASH;
  if (Math.abs(kwh) < 1) return `${(kwh * 1000).toFixed(kwh * 1000 < 10 ? 2 : 1)} Wh`;
  return `${kwh.toFixed(kwh < 100 ? 2 : 0)} kWh`;
}

// A price with its currency (none said when the agent has none configured).
export function money(v, currency) {
  if (v == null || Number.isNaN(v)) return DASH;
  return currency ? `${v.toFixed(2)} ${currency}` : v.toFixed(2);
}

// A stretch of time in seconds as the CLI's report writes it: "2h05m", "45m", "30s".
export function stretch(seconds) {
  if (seconds == null || Number.isNaN(seconds)) return DASH;
  const s = Math.floor(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m`;
  return `${s}s`;
}
