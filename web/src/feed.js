// One part of a page and the requests that feed it: it says "Loading…" until its first
// data, keeps what it drew when a request is slow or fails (and says so, with the data's
// age), asks again only once its last request is answered, and is dropped with its page
// (its requests aborted), so a slow route never blanks the page or piles up requests.
import { AuthError } from './api.js';

// A request out longer than this is said to be slow (the page asks every 3 s).
export const SLOW_MS = 5000;

// "12 s", "4 min", "2 h".
export function age(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

// What a part shows: {state, text, note}. `state` is loading (no data yet, asking),
// failed (the last request failed), slow (data, and a request out for long), ready;
// `text` the line beside its title; `note` the line in place of a part with no data.
export function describe({ hasData, updatedAt, pendingSince, error, now }) {
  const why = error ? failure(error) : '';
  if (!hasData) {
    if (error) return { state: 'failed', text: why, note: `No data yet: ${why}. Trying again.` };
    return { state: 'loading', text: 'loading…', note: 'Loading…' };
  }
  const updated = `updated ${age(now - updatedAt)} ago`;
  if (error) return { state: 'failed', text: `${updated}, ${why}`, note: '' };
  if (pendingSince != null && now - pendingSince > SLOW_MS) return { state: 'slow', text: `${updated}, waiting for the agent`, note: '' };
  return { state: 'ready', text: '', note: '' };
}

// A request's failure as said to the user: no answer (the network, the agent down), or
// the agent's own error message (503: busy, the store unreadable).
function failure(error) {
  if (error.status == null) return 'the agent did not answer';
  return `the agent could not answer (${error.message || `HTTP ${error.status}`})`;
}

export class Feed {
  // box: the element the part draws into (its data-state says the state), or several;
  // status: where the state's line goes (default: a span in the title of the card
  // holding the first box);
  // load({signal, last}): the data (last: what was drawn, for a request of what changed);
  // draw(data); every: polls between requests once there is data; onState(state):
  // instead of the default status line and note.
  constructor(ctx, { name, box, status, load, draw, every = 1, onState }) {
    this.ctx = ctx;
    this.name = name;
    this.boxes = box == null ? [] : [].concat(box);
    this.load = load;
    this.draw = draw;
    this.every = every;
    this.onState = onState;
    this.request = null; // the AbortController of the request out
    this.generation = 0; // reset() moves it on: an answer asked before is dropped
    this.data = undefined;
    this.updatedAt = 0;
    this.pendingSince = null;
    this.error = null;
    this.polls = 0;
    this.askedAt = -Infinity; // the poll that last asked
    this.stopped = false;
    // The line said in place of a part without data.
    this.notes = this.boxes.map((b) => {
      b.dataset.feed = name;
      const note = document.createElement('p');
      note.className = 'feed-note muted';
      b.before(note);
      return note;
    });
    if (!onState) {
      this.status = status ?? document.createElement('span');
      if (!status) {
        this.status.className = 'feed-state muted small';
        this.boxes[0]?.closest('.card')?.querySelector('h2')?.append(this.status);
      }
      this.status.setAttribute('role', 'status');
    }
    this.show();
  }

  // Called at each of the page's updates: asks when due and nothing is out.
  poll() {
    this.polls += 1;
    const due = this.data === undefined || this.error || this.polls - this.askedAt >= this.every;
    if (this.pendingSince == null && due) this.fetch();
    else this.show();
  }

  // Asks now (a changed range), unless a request is out.
  refetch() {
    if (this.pendingSince == null) this.fetch();
  }

  // Forgets what it drew (the range changed): loading again; a request out is dropped
  // and asked again.
  reset() {
    this.generation += 1;
    this.data = undefined;
    this.error = null;
    this.request?.abort();
    this.show();
  }

  async fetch() {
    this.askedAt = this.polls;
    this.pendingSince = Date.now();
    this.show();
    const generation = this.generation;
    const request = new AbortController();
    this.request = request;
    let data;
    let error = null;
    try {
      data = await this.load({ signal: request.signal, last: this.data });
    } catch (e) {
      error = e;
    }
    if (this.stopped) return;
    this.request = null;
    this.pendingSince = null;
    if (generation !== this.generation) {
      this.fetch();
      return;
    }
    if (error) {
      if (error instanceof AuthError) {
        this.ctx.onAuth?.();
        return;
      }
      this.error = error;
      this.show();
      return;
    }
    this.data = data;
    this.updatedAt = Date.now();
    this.error = null;
    this.draw(data);
    this.show();
    this.ctx.onData?.();
  }

  state() {
    return describe({ hasData: this.data !== undefined, updatedAt: this.updatedAt, pendingSince: this.pendingSince, error: this.error, now: Date.now() });
  }

  show() {
    const s = this.state();
    this.boxes.forEach((box, i) => {
      box.dataset.state = s.state;
      box.classList.toggle('feed-empty', s.note !== '');
      this.notes[i].textContent = s.note;
      this.notes[i].hidden = s.note === '';
    });
    if (this.onState) this.onState(s, this);
    else {
      this.status.textContent = s.text;
      this.status.dataset.state = s.state;
      this.status.classList.toggle('bad', s.state === 'failed');
    }
  }

  stop() {
    this.stopped = true;
    this.request?.abort();
  }
}

// The feeds of a page, polled together and stopped together.
export class Feeds {
  constructor() {
    this.list = [];
  }

  add(feed) {
    this.list.push(feed);
    return feed;
  }

  poll() {
    for (const f of this.list) f.poll();
  }

  stop() {
    for (const f of this.list) f.stop();
  }
}
