// The overview: the job's hangs across nodes while there is one (job_verdict.js), each GPU now (utilization beside SM and tensor activity) and over time (or, on a machine without one, the traced calls over
// time: overview_charts.js), the processes (sortable, filterable), the anomalies and the GPUs'
// health events. Each
// part asks for its own data, so a slow history store holds up only the charts' older points.
import { getJSON, getOptional } from '../api.js';
import { Feed, Feeds } from '../feed.js';
import { bytes, clock, count, duration, esc, percent, processName, rate, repeats } from '../format.js';
import { Table } from '../table.js';
import { anomalyRows, SCORE_HELP } from '../anomalies.js';
import { GPU_EVENTS_HELP, gpuEventRows } from '../gpu_events.js';
import { GPM_HELP } from '../gpu_now.js';
import { overviewCharts } from './overview_charts.js';
import { verdictFeed } from '../job_verdict.js';

export function overviewPage(root, ctx) {
  root.innerHTML = `
    <section class="card hangs-card" id="hangs-card" hidden><h2>Hangs across nodes</h2><div id="hangs"></div></section>
    <section class="card" id="gpu-card"><h2>GPUs <span id="gpu-source" class="muted small"></span></h2>
      <p id="gpu-none" class="plain" hidden></p><div id="gpu-now" class="table-wrap"></div>
      <p id="gpu-help" class="muted small legend" hidden>${esc(GPM_HELP)}</p><div id="gpu-charts" class="charts"></div></section>
    <section class="card" id="calls-card" hidden><h2>Traced calls <span class="muted small">per second, live</span></h2><div id="calls-chart" class="charts one-chart"></div></section>
    <section class="card"><h2>Processes</h2><div id="procs"></div></section>
    <section class="card"><h2>Anomalies <span id="anom-total" class="muted small"></span></h2><div id="anoms"></div>
      <p class="muted small legend">${esc(SCORE_HELP)}</p></section>
    <section class="card" id="gpu-events-card" hidden><h2>GPU health events <span id="gpu-events-total" class="muted small"></span></h2><div id="gpu-events"></div>
      <p class="muted small legend">${esc(GPU_EVENTS_HELP)}</p></section>`;
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

  const gpuEvents = new Table(root.querySelector('#gpu-events'), {
    id: 'gpu-events',
    sort: { key: 'ts_ns', dir: -1 },
    empty: 'No GPU health event since the agent started.',
    limit: 50,
    columns: [
      { key: 'ts_ns', label: 'Time', html: (r) => clock(r.ts_ns) },
      { key: 'gpu', label: 'GPU', num: true },
      { key: 'kind', label: 'Kind', html: (r) => `<span class="bad">${esc(r.kind)}</span>` },
      { key: 'detail', label: 'Detail' },
      { key: 'processes', label: 'Processes on the GPU', html: (r) => r.processes },
    ],
  });

  const feeds = new Feeds();
  const gpuCharts = overviewCharts(root, ctx, feeds);

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

  // The job's verdict across nodes: shown while a communicator hangs or one ended lately.
  const hangsCard = root.querySelector('#hangs-card');
  feeds.add(verdictFeed(ctx, {
    box: root.querySelector('#hangs'),
    show: (view) => {
      hangsCard.hidden = !view.hangs.length && !view.ended.length;
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

  // Shown on a machine with GPUs (an agent without NVML, or an older one, lists none).
  feeds.add(new Feed(ctx, {
    name: 'gpu-events',
    box: root.querySelector('#gpu-events'),
    every: 2,
    load: async ({ signal }) => {
      const [events, gpus] = await Promise.all([
        getOptional('/api/v1/gpu_events', null, { signal }),
        getOptional('/api/v1/gpus', { gpus: [] }, { signal }),
      ]);
      return { events, gpus: gpus.gpus ?? [] };
    },
    draw({ events, gpus }) {
      root.querySelector('#gpu-events-card').hidden = !events || (!gpus.length && !events.total);
      if (!events) return;
      root.querySelector('#gpu-events-total').textContent =
        `${events.total} since the agent started${events.dropped ? `, ${events.dropped} oldest not listed` : ''}`;
      gpuEvents.setRows(gpuEventRows(events));
    },
  }));

  return {
    refresh: () => feeds.poll(),
    rangeChanged: () => gpuCharts.rangeChanged(),
    retheme: () => gpuCharts.retheme(),
    unmount() {
      feeds.stop();
      gpuCharts.destroy();
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
