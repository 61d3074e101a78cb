// The overview: each GPU over time (or, on a machine without one, the traced calls over
// time), the processes (sortable, filterable) and the anomalies. Each part asks for its
// own data, so a slow history store holds up only the charts' older points.
import { getJSON, getOptional } from '../api.js';
import { TimeChart } from '../charts.js';
import { Feed, Feeds } from '../feed.js';
import { bytes, clock, count, duration, esc, percent, processName, rate, repeats } from '../format.js';
import { FIGURES, callColumns, fromHistory, fromPass, fromSeries, mergeCalls, mergePoints, toColumns } from '../gpu_history.js';
import { Table } from '../table.js';
import { anomalyRows, SCORE_HELP } from '../anomalies.js';

const LIVE_WINDOW_S = 900;

function figureFormat(unit) {
  if (unit === 'bytes') return bytes;
  if (unit === '%') return (v, digits) => `${digits == null ? Math.round(v) : v.toFixed(digits)}%`;
  return (v, digits) => `${digits == null ? Math.round(v * 10) / 10 : v.toFixed(digits)} ${unit}`;
}

const NO_GPU_LIVE = 'No GPU on this machine: NVML reports none (or is not installed), so there are no GPU charts. The traced processes and their calls are below.';

export function overviewPage(root, ctx) {
  root.innerHTML = `
    <section class="card" id="gpu-card"><h2>GPUs <span id="gpu-source" class="muted small"></span></h2>
      <p id="gpu-none" class="plain" hidden></p><div id="gpu-charts" class="charts"></div></section>
    <section class="card" id="calls-card" hidden><h2>Traced calls <span class="muted small">per second, live</span></h2><div id="calls-chart" class="charts one-chart"></div></section>
    <section class="card"><h2>Processes</h2><div id="procs"></div></section>
    <section class="card"><h2>Anomalies <span id="anom-total" class="muted small"></span></h2><div id="anoms"></div>
      <p class="muted small legend">${esc(SCORE_HELP)}</p></section>`;
  const chartBox = root.querySelector('#gpu-charts');
  const charts = FIGURES.map((f) => new TimeChart(chartBox, { title: f.title, fmt: figureFormat(f.unit), min: 0, minSpan: f.minSpan, sparse: f.sparse, binary: f.unit === 'bytes' }));
  const callChart = new TimeChart(root.querySelector('#calls-chart'), { title: 'Calls per second', fmt: (v, digits) => (digits == null ? count(Math.round(v)) : v.toFixed(digits)), min: 0 });
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
      { key: 'dur_ns', label: 'Duration', num: true, title: 'a slow call: its duration; a slow interval: the mean duration of its calls (geometric mean), with their number and the interval', html: (r) => `${duration(r.dur_ns)}${r.detail ? ` <span class="muted small">${esc(r.detail)}</span>` : ''}` },
      { key: 'median_ns', label: 'Usual (median)', num: true, title: 'the median duration the detector had learnt for the function (and size class) when it flagged this row', html: (r) => duration(r.median_ns) },
      { key: 'times', label: '× usual', num: true, title: 'the duration over the usual (median) duration', html: (r) => (r.times == null ? '–' : `×${count(r.times)}`) },
      { key: 'score', label: 'Score', num: true, title: SCORE_HELP, html: (r) => (r.score == null ? '–' : r.score.toFixed(1)) },
      { key: 'repeats', label: 'Repeats', num: true, title: 'slow calls of the same function in a row, folded into this row, and the time from the first to the last', html: (r) => repeats(r.repeats, r.ts_ns, r.last_ts_ns) },
    ],
  });

  const feeds = new Feeds();
  let points = []; // {t, gpu, util, mem, power, temp}
  let calls = []; // {t, calls, errors, domains}
  let callsReadAt = null; // Unix s of the last series read
  let pass = null; // the last sampling pass: its GPUs (none: no GPU on this machine)
  let range = ctx.range();
  let live = range === 'live';
  let store = true; // false: the agent keeps no history
  let historyNote = '';
  let historyTier = '';
  let historyStep = 0;

  // What there is instead of charts, said once: no GPU here (live), or none in the
  // store's window.
  function noneText() {
    if (!live) return store ? `No GPU sample in the history store over the last ${range}.` : 'No history store (serve --store): only the live range has data.';
    if (!pass) return 'No GPU sample yet.';
    if (pass.errors?.length) return `No GPU reading: NVML reported ${pass.errors.map(String).join('; ')}. The traced processes and their calls are below.`;
    return NO_GPU_LIVE;
  }

  function sourceText() {
    if (!live) return `history store, last ${range}${historyTier ? ` (${historyTier})` : ''}`;
    return `live: each sampling pass${historyNote ? `; ${historyNote}` : ''}`;
  }

  function drawCharts() {
    const { times, gpus, figures } = toColumns(points);
    FIGURES.forEach((f, i) => charts[i].setData(times, gpus.map((g) => `GPU ${g}`), figures[f.key]));
    const none = gpus.length === 0;
    const noGpu = root.querySelector('#gpu-none');
    noGpu.hidden = !none;
    noGpu.textContent = none ? noneText() : '';
    root.querySelector('#gpu-card').dataset.gpus = String(gpus.length);
    root.querySelector('#gpu-source').textContent = none ? '' : sourceText();
    // Without a GPU, what the agent traces: its calls per second.
    const callsShown = none && live && pass != null;
    root.querySelector('#calls-card').hidden = !callsShown;
    if (callsShown) {
      const { times: t, names, columns } = callColumns(calls);
      callChart.setData(t, names, columns);
    }
  }

  // The GPU charts: live, the in-memory series first then each new sampling pass; for a
  // range of the history store, its points, then only the steps from the last one on.
  const gpuFeed = feeds.add(new Feed(ctx, {
    name: 'gpus',
    box: chartBox,
    status: root.querySelector('#gpu-card h2').appendChild(Object.assign(document.createElement('span'), { className: 'feed-state muted small' })),
    async load({ signal, last }) {
      const now = Date.now() / 1000;
      if (!live) {
        const lastT = last?.range === range && points.length ? Math.max(...points.map((p) => p.t)) : null;
        const q = lastT != null && historyStep ? `from=${Math.floor(lastT)}&step=${historyStep / 1e9}s` : `since=${range}`;
        const doc = await getOptional(`/api/v1/history/gpus?${q}`, null, { signal });
        return { range, doc, since: q.startsWith('from') ? lastT : null };
      }
      const [series, gpus] = await Promise.all([
        last?.range === 'live' ? null : getOptional(`/api/v1/series?window=${LIVE_WINDOW_S}`, null, { signal }),
        getOptional('/api/v1/gpus', null, { signal }),
      ]);
      return { range: 'live', series, gpus, now };
    },
    draw(d) {
      if (d.range !== range) {
        gpuFeed.refetch(); // asked before the range changed
        return;
      }
      if (!live) {
        store = d.doc != null;
        historyTier = d.doc?.window?.tier ?? '';
        historyStep = d.doc?.window?.step_ns ?? 0;
        // A step is re-read whole: the points before the first one asked are kept.
        const kept = d.since != null ? points.filter((p) => p.t < d.since) : [];
        points = [...kept, ...fromHistory(d.doc)];
        // The store moves at each step: asked again about twice a step, at most every minute.
        gpuFeed.every = Math.min(20, Math.max(1, Math.round(historyStep / 1e9 / 6)));
        drawCharts();
        return;
      }
      if (d.series) {
        points = mergePoints(points, fromSeries(d.series), d.now, LIVE_WINDOW_S);
        calls = mergeCalls(calls, d.series.points ?? [], d.now, LIVE_WINDOW_S);
        callsReadAt = d.series.time_ns / 1e9;
      }
      pass = d.gpus ?? { gpus: [] };
      gpuFeed.every = 1;
      points = mergePoints(points, fromPass(pass), d.now, LIVE_WINDOW_S);
      drawCharts();
    },
  }));

  // Live: the history store's last 15 minutes, merged into the charts when it answers;
  // the charts do not wait for it.
  let historyFeed = null;
  function startHistory() {
    historyFeed = feeds.add(new Feed(ctx, {
      name: 'gpu-history',
      every: Infinity,
      load: ({ signal }) => getOptional('/api/v1/history/gpus?since=15m&step=10s', null, { signal }),
      draw(doc) {
        if (!live) return;
        historyNote = doc ? 'before them, the history store\'s last 15 minutes' : '';
        points = mergePoints(fromHistory(doc), points, Date.now() / 1000, LIVE_WINDOW_S);
        drawCharts();
      },
      onState(s, feed) {
        if (s.state === 'loading' || s.state === 'slow') historyNote = 'the history store\'s last 15 minutes are loading';
        else if (s.state === 'failed') historyNote = `the history store did not answer (${feed.error?.message ?? ''})`;
        root.querySelector('#gpu-card').dataset.history = s.state;
        if (points.length && live) root.querySelector('#gpu-source').textContent = sourceText();
      },
    }));
  }
  if (live) startHistory();

  // Without a GPU, the traced calls per second: the in-memory series, asked for the
  // seconds since its last point only.
  const callFeed = feeds.add(new Feed(ctx, {
    name: 'calls',
    box: root.querySelector('#calls-chart'),
    async load({ signal }) {
      if (!live || !pass || pass.gpus.length > 0 || callsReadAt == null) return null;
      const now = Date.now() / 1000;
      const window = Math.min(LIVE_WINDOW_S, Math.max(2, Math.ceil(now - callsReadAt) + 2));
      return { series: await getJSON(`/api/v1/series?window=${window}`, { signal }), now };
    },
    draw(d) {
      if (!d || !live) return;
      calls = mergeCalls(calls, d.series.points ?? [], d.now, LIVE_WINDOW_S);
      callsReadAt = d.series.time_ns / 1e9;
      drawCharts();
    },
  }));

  let prev = null; // {t, calls: Map, kernels: Map}
  feeds.add(new Feed(ctx, {
    name: 'processes',
    box: root.querySelector('#procs'),
    every: 2, // the costlier part to lay out, with hundreds of processes
    async load({ signal }) {
      const [procDoc, work, overhead] = await Promise.all([
        getJSON('/api/v1/processes', { signal }),
        getOptional('/api/v1/work', { processes: [] }, { signal }),
        getOptional('/api/v1/overhead', { processes: [] }, { signal }),
      ]);
      return { procDoc, work, overhead, t: performance.now() / 1000 };
    },
    draw({ procDoc, work, overhead, t }) {
      const kernels = new Map(work.processes.map((w) => [w.pid, w.kernels]));
      const cost = new Map(overhead.processes.map((o) => [o.pid, o]));
      const estimated = overhead.attached_share != null && overhead.attached_share < 1;
      const callCounts = new Map();
      const dt = prev ? t - prev.t : 0;
      const r = (now, before) => (prev && before != null && dt > 0 ? Math.max(0, (now - before) / dt) : null);
      const rows = procDoc.processes.map((p) => {
        callCounts.set(p.pid, p.calls);
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
      prev = { t, calls: callCounts, kernels };
      procs.setRows(rows);
    },
  }));

  feeds.add(new Feed(ctx, {
    name: 'anomalies',
    box: root.querySelector('#anoms'),
    every: 2,
    load: ({ signal }) => getJSON('/api/v1/anomalies', { signal }),
    draw(doc) {
      root.querySelector('#anom-total').textContent = `${doc.total} slow calls, ${doc.interval_total} slow intervals, ${doc.level_shifts} level shifts`;
      anoms.setRows(anomalyRows(doc));
    },
  }));

  return {
    refresh: () => feeds.poll(),
    rangeChanged() {
      range = ctx.range();
      live = range === 'live';
      points = [];
      pass = null;
      historyStep = 0;
      historyTier = '';
      historyNote = '';
      callsReadAt = null;
      if (live && !historyFeed) startHistory();
      else if (live) {
        historyFeed.reset();
        historyFeed.refetch();
      }
      gpuFeed.reset(); // loading again: the charts are for another window
      gpuFeed.refetch();
      drawCharts();
    },
    retheme() {
      charts.forEach((c) => c.retheme());
      callChart.retheme();
    },
    unmount() {
      feeds.stop();
      charts.forEach((c) => c.destroy());
      callChart.destroy();
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
