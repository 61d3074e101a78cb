// The overview: each GPU over time, the processes (sortable, filterable) and the
// anomalies.
import { getJSON, getOptional } from '../api.js';
import { TimeChart } from '../charts.js';
import { bytes, clock, count, duration, esc, percent, processName, rate, repeats } from '../format.js';
import { FIGURES, fromHistory, fromPass, fromSeries, mergePoints, toColumns } from '../gpu_history.js';
import { Table } from '../table.js';

const LIVE_WINDOW_S = 900;

function figureFormat(unit) {
  if (unit === 'bytes') return bytes;
  if (unit === '%') return (v) => `${Math.round(v)}%`;
  return (v) => `${Math.round(v * 10) / 10} ${unit}`;
}

export function overviewPage(root, ctx) {
  root.innerHTML = `
    <section class="card"><h2>GPUs <span id="gpu-source" class="muted small"></span></h2>
      <div id="gpu-charts" class="charts"></div><p id="gpu-note" class="muted small"></p></section>
    <section class="card"><h2>Processes</h2><div id="procs"></div></section>
    <section class="card"><h2>Anomalies <span id="anom-total" class="muted small"></span></h2><div id="anoms"></div></section>`;
  const charts = FIGURES.map((f) => new TimeChart(root.querySelector('#gpu-charts'), { title: f.title, fmt: figureFormat(f.unit), min: 0, sparse: f.sparse }));
  const procs = new Table(root.querySelector('#procs'), {
    id: 'processes',
    filterFields: ['comm', 'cmdline', 'pid', 'workload', 'job', 'rank'],
    filterLabel: 'Filter processes (command, pid, pod, container, job, rank)',
    sort: { key: 'calls_rate', dir: -1 },
    empty: 'No traced process yet.',
    columns: [
      { key: 'comm', label: 'Command', html: (r) => `<a href="#/process/${r.pid}" title="${esc(r.cmdline)}">${esc(r.comm || '?')}</a>${r.exited ? ' <span class="tag">exited</span>' : ''}` },
      { key: 'pid', label: 'PID', num: true },
      { key: 'rank', label: 'Rank', num: true, html: (r) => (r.rank == null ? '–' : `${r.rank}${r.world_size != null ? `/${r.world_size}` : ''}`) },
      { key: 'workload', label: 'Pod / container', html: (r) => workloadCell(r) },
      { key: 'job', label: 'Job', html: (r) => (r.job ? esc(r.job) : '–') },
      { key: 'gpu_mem', label: 'GPU mem', num: true, html: (r) => bytes(r.gpu_mem) },
      { key: 'sm', label: 'SM%', num: true, html: (r) => (r.sm == null ? '–' : `${Math.round(r.sm)}%`) },
      { key: 'calls_rate', label: 'Calls/s', num: true, html: (r) => `${r.estimated && r.calls_rate > 0 ? '<span class="est" title="scaled from part of the time (duty cycle): an estimate">~</span>' : ''}${rate(r.calls_rate)}` },
      { key: 'kernels_rate', label: 'Kernels/s', num: true, html: (r) => rate(r.kernels_rate) },
      { key: 'errors', label: 'Errors', num: true, html: (r) => (r.errors ? `<span class="bad">${count(r.errors)}</span>` : '0') },
      { key: 'overhead', label: 'Overhead', num: true, title: 'share of the process\'s CPU time spent in probes since it was first traced (estimated, at most 100%)', html: (r) => percent(r.overhead, 2) },
    ],
  });
  const anoms = new Table(root.querySelector('#anoms'), {
    id: 'anomalies',
    sort: { key: 'ts_ns', dir: -1 },
    empty: 'No anomaly.',
    limit: 50,
    columns: [
      { key: 'ts_ns', label: 'Time', html: (r) => clock(r.ts_ns) },
      { key: 'kind', label: 'Kind' },
      { key: 'pid', label: 'PID', num: true, html: (r) => (r.pid ? `<a href="#/process/${r.pid}">${r.pid}</a>` : '–') },
      { key: 'name', label: 'Function', html: (r) => `<code>${esc(r.domain)}:${esc(r.name)}</code>` },
      { key: 'dur_ns', label: 'Duration', num: true, html: (r) => duration(r.dur_ns) },
      { key: 'median_ns', label: 'Median', num: true, html: (r) => duration(r.median_ns) },
      { key: 'score', label: 'Score', num: true, html: (r) => (r.score == null ? '–' : r.score.toFixed(1)) },
      { key: 'repeats', label: 'Repeats', num: true, title: 'slow calls of the same function in a row, folded into this row, and the time from the first to the last', html: (r) => repeats(r.repeats, r.ts_ns, r.last_ts_ns) },
    ],
  });

  let points = [];
  let seeded = null; // the range the charts were filled for
  let prev = null; // {t, calls: Map, kernels: Map}

  function drawCharts() {
    const { times, gpus, figures } = toColumns(points);
    FIGURES.forEach((f, i) => charts[i].setData(times, gpus.map((g) => `GPU ${g}`), figures[f.key]));
    root.querySelector('#gpu-note').textContent = gpus.length === 0 ? 'No GPU sample in this range (no NVML on this machine, or nothing sampled yet).' : '';
  }

  async function refreshGpus(range) {
    const source = root.querySelector('#gpu-source');
    if (range !== 'live') {
      if (seeded !== range || ctx.ticks % 15 === 0) {
        const doc = await getOptional(`/api/v1/history/gpus?since=${range}`);
        if (doc) {
          points = fromHistory(doc);
          source.textContent = `history store, last ${range} (${doc.window?.tier ?? ''})`;
        } else {
          points = [];
          source.textContent = 'no history store: only the live range has data';
        }
        seeded = range;
        drawCharts();
      }
      return;
    }
    const now = Date.now() / 1000;
    if (seeded !== 'live') {
      const [hist, series] = await Promise.all([
        getOptional('/api/v1/history/gpus?since=15m&step=10s'),
        getOptional(`/api/v1/series?window=${LIVE_WINDOW_S}`),
      ]);
      points = mergePoints(fromHistory(hist), fromSeries(series), now, LIVE_WINDOW_S);
      seeded = 'live';
      source.textContent = hist ? 'live, after the history store' : 'live, in-memory series';
    }
    const pass = await getOptional('/api/v1/gpus');
    points = mergePoints(points, fromPass(pass), now, LIVE_WINDOW_S);
    drawCharts();
  }

  async function refreshProcesses() {
    const [procDoc, work, overhead] = await Promise.all([
      getJSON('/api/v1/processes'),
      getOptional('/api/v1/work', { processes: [] }),
      getOptional('/api/v1/overhead', { processes: [] }),
    ]);
    const t = performance.now() / 1000;
    const kernels = new Map(work.processes.map((w) => [w.pid, w.kernels]));
    const cost = new Map(overhead.processes.map((o) => [o.pid, o]));
    const estimated = overhead.attached_share != null && overhead.attached_share < 1;
    const calls = new Map();
    const rows = procDoc.processes.map((p) => {
      calls.set(p.pid, p.calls);
      const dt = prev ? t - prev.t : 0;
      const r = (now, before) => (prev && before != null && dt > 0 ? Math.max(0, (now - before) / dt) : null);
      const gpus = p.gpus ?? [];
      return {
        pid: p.pid,
        comm: processName(p.comm, p.cmdline),
        cmdline: p.cmdline ?? '',
        rank: p.rank ?? null,
        world_size: p.world_size ?? null,
        container_id: p.container_id ?? null,
        pod_uid: p.pod_uid ?? null,
        // "namespace/pod · container" when the kubelet named it, else the ids.
        workload: p.pod ? `${p.namespace}/${p.pod}${p.container ? ` · ${p.container}` : ''}` : (p.container_id ?? ''),
        job: p.job ? `${p.job}${p.job_step != null ? `.${p.job_step}` : ''}` : null,
        exited: p.exited === true,
        gpu_mem: gpus.length ? gpus.reduce((s, g) => s + (g.memory_max_bytes ?? 0), 0) : null,
        sm: gpus.length ? Math.max(...gpus.map((g) => g.sm_mean_percent ?? 0)) : null,
        calls: p.calls,
        calls_rate: r(p.calls, prev?.calls.get(p.pid)),
        kernels_rate: r(kernels.get(p.pid) ?? 0, prev?.kernels.get(p.pid)),
        errors: p.errors,
        overhead: cost.get(p.pid)?.cpu_share ?? null,
        estimated,
      };
    });
    prev = { t, calls, kernels };
    procs.setRows(rows);
  }

  async function refreshAnomalies() {
    const doc = await getJSON('/api/v1/anomalies');
    const rows = [
      ...doc.anomalies.map((a) => ({ ...a, kind: 'slow call' })),
      ...doc.intervals.map((a) => ({ ts_ns: a.start_ns, kind: `slow interval ×${(a.ratio ?? 0).toFixed(1)}`, pid: null, domain: a.domain, name: a.name, dur_ns: a.end_ns - a.start_ns, median_ns: a.median_ns, score: a.score })),
    ];
    root.querySelector('#anom-total').textContent = `${doc.total} slow calls, ${doc.interval_total} slow intervals, ${doc.level_shifts} level shifts`;
    anoms.setRows(rows);
  }

  return {
    // The charts move at every wake-up; the tables (the costlier part to lay out, with
    // hundreds of processes) at every other one.
    async refresh() {
      const tables = ctx.ticks % 2 === 0 ? [refreshProcesses(), refreshAnomalies()] : [];
      await Promise.all([refreshGpus(ctx.range()), ...tables]);
    },
    rangeChanged() {
      seeded = null;
    },
    retheme() {
      charts.forEach((c) => c.retheme());
    },
    unmount() {
      charts.forEach((c) => c.destroy());
    },
  };
}

// A process's pod and container as named by the kubelet; an unnamed pod's UID or a
// container's short id otherwise.
function workloadCell(r) {
  if (r.workload && r.workload !== r.container_id) return `<span title="${esc(r.pod_uid ?? '')}">${esc(r.workload)}</span>`;
  if (r.container_id) return `<code title="${esc(r.container_id)}">${esc(r.container_id.slice(0, 12))}</code>`;
  if (r.pod_uid) return `<code title="pod UID">${esc(r.pod_uid.slice(0, 8))}</code>`;
  return '–';
}
