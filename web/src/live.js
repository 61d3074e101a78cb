// Live updates: one EventSource on /api/v1/stream (same origin, the cookie rides along).
// Each `summary` event (one a second) wakes the page, at most every `minGapMs`; with the
// stream down the page still refreshes every `fallbackMs`. The indicator counts every
// event as it arrives.

export class Live {
  constructor(indicator, { minGapMs = 3000, fallbackMs = 6000 } = {}) {
    this.indicator = indicator;
    this.minGapMs = minGapMs;
    this.fallbackMs = fallbackMs;
    this.listeners = new Set();
    this.events = 0;
    this.last = 0;
    this.pending = null;
    this.source = null;
    this.timer = null;
    this.summary = null;
  }

  start() {
    if (this.source) return;
    this.source = new EventSource('/api/v1/stream');
    this.source.addEventListener('summary', (e) => {
      this.events += 1;
      try {
        this.summary = JSON.parse(e.data);
      } catch {
        this.summary = null;
      }
      this.indicator.dataset.events = String(this.events);
      this.indicator.classList.add('on');
      this.indicator.title = `live: ${this.events} updates`;
      this.wake();
    });
    this.source.addEventListener('error', () => this.indicator.classList.remove('on'));
    this.timer = setInterval(() => {
      if (performance.now() - this.last > this.fallbackMs) this.wake();
    }, this.fallbackMs);
  }

  stop() {
    this.source?.close();
    this.source = null;
    clearInterval(this.timer);
    this.indicator.classList.remove('on');
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  wake() {
    const now = performance.now();
    const wait = this.last + this.minGapMs - now;
    if (wait > 0) {
      if (!this.pending) this.pending = setTimeout(() => {
        this.pending = null;
        this.wake();
      }, wait);
      return;
    }
    this.last = now;
    if (document.hidden) return;
    for (const fn of this.listeners) fn(this.summary);
  }
}
