// Time-series charts over uPlot: one chart per figure, one line per GPU (or series),
// sized to their box and redrawn with the theme.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export class TimeChart {
  // fmt: value => text for the axis and the legend
  // sparse: values only at some times (nulls between are unknown, not gaps): lines join them
  constructor(container, { title, fmt, height = 180, min, max, sparse = false }) {
    this.box = document.createElement('div');
    this.box.className = 'chart';
    this.box.dataset.title = title;
    container.append(this.box);
    this.title = title;
    this.fmt = fmt ?? ((v) => String(v));
    this.height = height;
    this.range = { min, max };
    this.sparse = sparse;
    this.plot = null;
    this.names = [];
    this.points = 0;
    this.observer = new ResizeObserver(() => {
      if (this.plot) this.plot.setSize({ width: this.width(), height: this.height });
    });
    this.observer.observe(this.box);
    // A chart off the screen keeps its newest data and draws it when it comes back.
    this.onScreen = true;
    this.stale = false;
    this.visibility = typeof IntersectionObserver === 'function'
      ? new IntersectionObserver((entries) => {
        this.onScreen = entries[entries.length - 1].isIntersecting;
        if (this.onScreen && this.stale) this.draw();
      })
      : null;
    this.visibility?.observe(this.box);
  }

  width() {
    return Math.max(240, this.box.clientWidth);
  }

  make(names) {
    this.plot?.destroy();
    const axis = cssVar('--muted') || '#888';
    const grid = cssVar('--grid') || 'rgba(128,128,128,0.2)';
    const fmt = this.fmt;
    const { min, max } = this.range;
    const opts = {
      title: this.title,
      width: this.width(),
      height: this.height,
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: {
        x: { time: true },
        y: { range: (u, lo, hi) => [min ?? Math.min(0, lo ?? 0), max ?? Math.max(hi ?? 1, min != null ? min + 1 : 1)] },
      },
      axes: [
        { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid } },
        { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid }, size: 70, values: (u, vals) => vals.map((v) => fmt(v)) },
      ],
      series: [
        {},
        ...names.map((n, i) => ({
          label: n,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: this.sparse,
          points: { show: false },
          value: (u, v) => (v == null ? '–' : fmt(v)),
        })),
      ],
    };
    this.names = names;
    this.plot = new uPlot(opts, [[], ...names.map(() => [])], this.box);
  }

  // xs: Unix seconds; ys: one array per name, null where there is no value.
  setData(xs, names, ys) {
    if (!this.plot || names.length !== this.names.length || names.some((n, i) => n !== this.names[i])) this.make(names);
    this.points = xs.length;
    this.box.dataset.points = String(xs.length);
    this.data = [xs, ...ys];
    if (this.onScreen) this.draw();
    else this.stale = true;
  }

  draw() {
    this.stale = false;
    this.plot.setData(this.data);
  }

  // Redraws with the theme's colours (after a switch).
  retheme() {
    if (!this.plot) return;
    this.make(this.names);
    if (this.data) this.plot.setData(this.data);
  }

  destroy() {
    this.observer.disconnect();
    this.visibility?.disconnect();
    this.plot?.destroy();
  }
}
