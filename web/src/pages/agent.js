// The agent's health: ring-buffer drops, probe hits, the overhead budget and duty cycle,
// the history store, and the agent's own CPU and memory (from /metrics, as Prometheus
// reads them, and /api/v1/overhead and /api/v1/counters).
import { getOptional, getText } from '../api.js';
import { TimeChart } from '../charts.js';
import { Feed, Feeds } from '../feed.js';
import { bytes, clock, count, percent } from '../format.js';
import { metricSum, metricValue, parseMetrics } from '../prom.js';
import { Table } from '../table.js';

const KEEP_S = 900;

function tile(label, value, note = '', bad = false) {
  return `<div class="tile${bad ? ' bad-tile' : ''}"><div class="label">${label}</div><div class="value">${value}</div><div class="muted small">${note}</div></div>`;
}

export function agentPage(root, ctx) {
  root.innerHTML = `
    <section class="card"><h2>Agent</h2><div id="tiles" class="tiles"></div></section>
    <section class="card"><h2>Agent cost</h2><div id="agent-charts" class="charts two-charts"></div></section>
    <div class="two">
      <section class="card"><h2>History store</h2><div id="store"></div></section>
      <section class="card"><h2>Budget and duty cycle</h2><div id="budget"></div></section>
    </div>
    <section class="card"><h2>Counters</h2><div id="counters"></div></section>`;
  const cpuChart = new TimeChart(root.querySelector('#agent-charts'), { title: 'Agent CPU (% of one core)', fmt: (v, digits) => `${v.toFixed(digits ?? 1)}%`, min: 0 });
  const rssChart = new TimeChart(root.querySelector('#agent-charts'), { title: 'Agent resident memory', fmt: bytes, min: 0, binary: true });
  const counters = new Table(root.querySelector('#counters'), {
    id: 'counters',
    filterFields: ['key'],
    filterLabel: 'Filter counters',
    sort: { key: 'key', dir: 1 },
    columns: [
      { key: 'key', label: 'Counter', html: (r) => `<code>${r.key}</code>` },
      { key: 'value', label: 'Value', num: true, html: (r) => count(r.value) },
    ],
  });
  const history = []; // {t, cpu, rss}
  let prevCpu = null;
  let m = null; // the last /metrics, parsed
  let cpu = null;
  let overhead; // undefined: not read yet; null: none (per-call mode)

  function drawTiles() {
    if (!m) return;
    const drops = metricValue(m, 'eacgm_ring_buffer_drops_total') ?? 0;
    const events = metricValue(m, 'eacgm_events_total');
    const counted = metricValue(m, 'eacgm_counted_calls_total');
    const probes = metricValue(m, 'eacgm_probes_attached');
    const libs = metricValue(m, 'eacgm_libraries_attached');
    const start = metricValue(m, 'eacgm_agent_start_time_seconds');
    const rss = metricValue(m, 'eacgm_agent_resident_memory_bytes');
    const overBudget = overhead?.over_budget ?? 0;
    root.querySelector('#tiles').innerHTML = [
      tile('Ring-buffer drops', count(drops), 'records the kernel could not queue', drops > 0),
      tile('Probe hits', count((events ?? 0) + (counted ?? 0)), `${count(events)} records, ${count(counted)} counted in the kernel`),
      tile('Probes', count(probes), `in ${count(libs)} libraries`),
      tile('CPU', cpu == null ? '…' : `${cpu.toFixed(1)}%`, 'of one core'),
      tile('Resident memory', bytes(rss)),
      tile('Over budget', overhead === undefined ? '…' : count(overBudget), overhead ? `budget ${percent(overhead.budget)} per process` : overhead === null ? 'per-call mode' : '', overBudget > 0),
      tile('Duty cycle', overhead ? percent(overhead.duty_fraction, 0) : overhead === undefined ? '…' : '–', overhead ? `attached ${percent(overhead.attached_share, 0)} of the trace` : ''),
      tile('Up since', start ? new Date(start * 1000).toLocaleString() : '–'),
    ].join('');
  }

  const feeds = new Feeds();
  feeds.add(new Feed(ctx, {
    name: 'metrics',
    box: [root.querySelector('#tiles'), root.querySelector('#agent-charts'), root.querySelector('#store')],
    load: ({ signal }) => getText('/metrics', { signal }),
    draw(text) {
      m = parseMetrics(text);
      const t = Date.now() / 1000;
      const cpuS = metricValue(m, 'eacgm_agent_cpu_seconds_total');
      const rss = metricValue(m, 'eacgm_agent_resident_memory_bytes');
      cpu = prevCpu && cpuS != null && t > prevCpu.t ? ((cpuS - prevCpu.s) / (t - prevCpu.t)) * 100 : null;
      if (cpuS != null) prevCpu = { t, s: cpuS };
      history.push({ t, cpu, rss });
      while (history.length && history[0].t < t - KEEP_S) history.shift();
      const xs = history.map((h) => h.t);
      cpuChart.setData(xs, ['agent'], [history.map((h) => h.cpu)]);
      rssChart.setData(xs, ['agent'], [history.map((h) => h.rss)]);
      drawTiles();
      drawStore(root.querySelector('#store'), m);
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'overhead',
    box: root.querySelector('#budget'),
    load: ({ signal }) => getOptional('/api/v1/overhead', null, { signal }),
    draw(doc) {
      overhead = doc;
      drawBudget(root.querySelector('#budget'), overhead);
      drawTiles();
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'counters',
    box: root.querySelector('#counters'),
    load: ({ signal }) => getOptional('/api/v1/counters', { counters: {} }, { signal }),
    draw(counterDoc) {
      counters.setRows(Object.entries(counterDoc.counters).map(([key, value]) => ({ key, value })));
    },
  }));

  return {
    refresh: () => feeds.poll(),
    rangeChanged() {},
    retheme() {
      cpuChart.retheme();
      rssChart.retheme();
    },
    unmount() {
      feeds.stop();
      cpuChart.destroy();
      rssChart.destroy();
    },
  };
}

// The history store's state, from its metrics.
function drawStore(box, m) {
  const storeUp = metricValue(m, 'eacgm_store_up');
  if (storeUp == null) {
    box.innerHTML = '<p class="muted">No history store (serve --store none).</p>';
    return;
  }
  const last = metricValue(m, 'eacgm_store_last_write_timestamp_seconds');
  box.innerHTML = `<dl class="facts">
    <dt>State</dt><dd class="${storeUp ? '' : 'bad'}">${storeUp ? 'writing' : 'failing'}</dd>
    <dt>Size</dt><dd>${bytes(metricValue(m, 'eacgm_store_size_bytes'))}</dd>
    <dt>Rows written</dt><dd>${count(metricSum(m, 'eacgm_store_rows_written_total'))}</dd>
    <dt>Batches written</dt><dd>${count(metricValue(m, 'eacgm_store_batches_written_total'))}</dd>
    <dt>Write failures</dt><dd>${count(metricValue(m, 'eacgm_store_write_failures_total'))}</dd>
    <dt>Spooled batches</dt><dd>${count(metricValue(m, 'eacgm_store_spooled_batches'))}</dd>
    <dt>Dropped rows</dt><dd>${count(metricSum(m, 'eacgm_store_dropped_rows_total'))}</dd>
    <dt>Last write</dt><dd>${last ? clock(last * 1e9) : '–'}</dd></dl>`;
}

// The overhead budget and the duty cycle.
function drawBudget(box, overhead) {
  box.innerHTML = overhead
    ? `<dl class="facts">
    <dt>Budget</dt><dd>${percent(overhead.budget)} of each process's CPU</dd>
    <dt>Calibrated</dt><dd>${overhead.calibrated ? 'yes' : 'no'} (entry ${count(overhead.hit_cost_ns?.entry)} ns, entry+return ${count(overhead.hit_cost_ns?.entry_return)} ns)</dd>
    <dt>Processes over budget</dt><dd>${count(overhead.over_budget)}</dd>
    <dt>Probes timed less often</dt><dd>${count(overhead.reduced_probes)} (sparsest 1 in ${2 ** (overhead.max_sample_shift ?? 0)})</dd>
    <dt>Duty fraction</dt><dd>${percent(overhead.duty_fraction, 0)}</dd>
    <dt>Attached share</dt><dd>${percent(overhead.attached_share, 0)}${overhead.attached_share < 1 ? ' (some counts are estimates, marked ~)' : ''}</dd></dl>`
    : '<p class="muted">No overhead report (per-call mode).</p>';
}
