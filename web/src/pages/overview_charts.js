// The overview's charts: each GPU over time (live: the in-memory series, then each
// sampling pass, with the history store's last 15 minutes merged in when it answers; a
// range of the store: its points, then only the steps after the last one), or on a
// machine without a GPU, the traced calls per second. Each is a part of its own (feed.js).
import { getJSON, getOptional } from '../api.js';
import { TimeChart } from '../charts.js';
import { Feed } from '../feed.js';
import { bytes, count } from '../format.js';
import { gpuNowHtml } from '../gpu_now.js';
import { FIGURES, callColumns, fromHistory, fromPass, fromSeries, mergeCalls, mergePoints, toColumns } from '../gpu_history.js';

const LIVE_WINDOW_S = 900;

function figureFormat(unit) {
  if (unit === 'bytes') return bytes;
  if (unit === '%') return (v, digits) => `${digits == null ? Math.round(v) : v.toFixed(digits)}%`;
  return (v, digits) => `${digits == null ? Math.round(v * 10) / 10 : v.toFixed(digits)} ${unit}`;
}

const NO_GPU_LIVE = 'No GPU on this machine: NVML reports none (or is not installed), so there are no GPU charts. The traced processes and their calls are below.';

// Draws into the overview's #gpu-card and #calls-card (root holds them); its feeds are
// added to `feeds`, polled and stopped with the page's.
export function overviewCharts(root, ctx, feeds) {
  const chartBox = root.querySelector('#gpu-charts');
  const charts = FIGURES.map((f) => new TimeChart(chartBox, { title: f.title, fmt: figureFormat(f.unit), min: 0, minSpan: f.minSpan, sparse: f.sparse, binary: f.unit === 'bytes' }));
  const callChart = new TimeChart(root.querySelector('#calls-chart'), { title: 'Calls per second', fmt: (v, digits) => (digits == null ? count(Math.round(v)) : v.toFixed(digits)), min: 0 });

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
  let nowShown = ''; // the GPU rows' HTML as last written

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
    // Live, each GPU's last pass as a row (written again only when it changed, so that a
    // tooltip being read stays up).
    const now = live && !none ? gpuNowHtml(pass) : '';
    if (now !== nowShown) {
      root.querySelector('#gpu-now').innerHTML = now;
      nowShown = now;
    }
    root.querySelector('#gpu-help').hidden = none;
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
  feeds.add(new Feed(ctx, {
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

  return {
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
    destroy() {
      charts.forEach((c) => c.destroy());
      callChart.destroy();
    },
  };
}
