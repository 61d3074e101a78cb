// Time-series charts over uPlot: one chart per figure, one line per GPU (or series),
// sized to their box and redrawn with the theme. A chart without a value is not drawn
// (its box is hidden), and its axis never repeats a label.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { tickLabels } from './format.js';

// Steps of a bytes axis: 1, 2, 4 ... 512 of each binary unit (256 MiB, not 238.4 MiB).
const BINARY_STEPS = [0, 1, 2, 3, 4].flatMap((u) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((m) => m * 1024 ** u));

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export class TimeChart {
  // fmt: (value, digits) => text for the axis (digits: the decimals its ticks need) and
  // the legend (digits undefined); minSpan: the least height of the y range, so that a
  // flat line at 0 has an axis in sensible steps; sparse: values only at some times
  // (nulls between are unknown, not gaps): lines join them; binary: the values are bytes
  constructor(container, { title, fmt, height = 180, min, max, minSpan = 1, sparse = false, binary = false }) {
    this.box = document.createElement('div');
    this.box.className = 'chart';
    this.box.dataset.title = title;
    container.append(this.box);
    this.title = title;
    this.fmt = fmt ?? ((v) => String(v));
    this.height = height;
    this.range = { min, max, minSpan };
    this.sparse = sparse;
    this.binary = binary;
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
    const { min, max, minSpan } = this.range;
    const opts = {
      title: this.title,
      width: this.width(),
      height: this.height,
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: {
        x: { time: true },
        y: {
          range: (u, lo, hi) => {
            const bottom = min ?? Math.min(0, lo ?? 0);
            return [bottom, max ?? Math.max(hi ?? bottom + minSpan, bottom + minSpan)];
          },
        },
      },
      axes: [
        { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid } },
        { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid }, size: 70, values: (u, vals) => this.ticks(vals), ...(this.binary ? { incrs: BINARY_STEPS } : {}) },
      ],
      series: [
        // The time in the legend only while the pointer is on the chart (no "Time: --").
        { label: 'Time', value: (u, v) => (v == null ? '' : new Date(v * 1000).toLocaleTimeString()) },
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

  // The y axis's labels, also kept on the box (the tests read them: uPlot draws on a canvas).
  ticks(values) {
    const labels = tickLabels(values, this.fmt);
    this.box.dataset.yTicks = labels.join('|');
    return labels;
  }

  // xs: Unix seconds; ys: one array per name, null where there is no value. Without any
  // value the chart is hidden.
  setData(xs, names, ys) {
    const any = ys.some((col) => col.some((v) => v != null));
    this.box.hidden = !any;
    this.box.dataset.points = String(any ? xs.length : 0);
    this.points = any ? xs.length : 0;
    if (!any) {
      this.data = null;
      return;
    }
    if (!this.plot || names.length !== this.names.length || names.some((n, i) => n !== this.names[i])) this.make(names);
    this.data = [xs, ...ys];
    if (this.onScreen) this.draw();
    else this.stale = true;
  }

  draw() {
    this.stale = false;
    if (this.plot && this.data) this.plot.setData(this.data);
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
