// Reads Prometheus text exposition (GET /metrics) into samples: the agent page's
// figures (CPU, RSS, store, duty cycle) come from the same families Prometheus scrapes.

function parseLabels(text) {
  const labels = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    labels[m[1]] = m[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

// [{name, labels, value}] of every sample line; comments and bad lines are skipped.
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    let name;
    let labels = {};
    let rest;
    if (brace >= 0 && brace < line.indexOf(' ')) {
      name = line.slice(0, brace);
      const close = line.lastIndexOf('}');
      if (close < brace) continue;
      labels = parseLabels(line.slice(brace + 1, close));
      rest = line.slice(close + 1).trim();
    } else {
      const sp = line.indexOf(' ');
      if (sp < 0) continue;
      name = line.slice(0, sp);
      rest = line.slice(sp + 1).trim();
    }
    const value = Number(rest.split(/\s+/)[0]);
    if (!Number.isNaN(value)) out.push({ name, labels, value });
  }
  return out;
}

// The value of the first sample of `name` whose labels include `match`; null if none.
export function metricValue(samples, name, match = {}) {
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) return s.value;
  }
  return null;
}

// The sum over every sample of `name`; null when there is none.
export function metricSum(samples, name) {
  let sum = null;
  for (const s of samples) if (s.name === name) sum = (sum ?? 0) + s.value;
  return sum;
}
