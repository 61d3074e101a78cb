// The agent's API on this origin. The browser sends the session cookie (set by the login
// form) by itself; a 401 means the agent wants a token and the login form is shown.

export class AuthError extends Error {
  constructor() {
    super('this agent needs a token');
  }
}

export class ApiError extends Error {
  // `body`: the agent's JSON answer, when it sent one ({"error":..., and what else it says}).
  constructor(status, message, body = null) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

// At most this many requests at once per lane: the agent serves a fixed number of
// connections (8 by default, the event stream holding one), shared with Prometheus and
// other clients, and the browser would open up to six. The history store's routes have a
// lane of their own: a slow query of the store never holds up the live routes.
const LANES = {
  live: { max: 2, busy: 0, waiting: [] },
  history: { max: 2, busy: 0, waiting: [] },
};

export function laneOf(path) {
  return path.startsWith('/api/v1/history/') ? 'history' : 'live';
}

function aborted(signal) {
  return signal?.reason ?? new DOMException('aborted', 'AbortError');
}

// Waits for a free place in the lane; a request aborted while it waits leaves the queue.
function enter(lane, signal) {
  if (signal?.aborted) return Promise.reject(aborted(signal));
  if (lane.busy < lane.max) {
    lane.busy += 1;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const waiter = () => {
      signal?.removeEventListener('abort', onAbort);
      lane.busy += 1;
      resolve();
    };
    const onAbort = () => {
      const i = lane.waiting.indexOf(waiter);
      if (i >= 0) lane.waiting.splice(i, 1);
      reject(aborted(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    lane.waiting.push(waiter);
  });
}

function leave(lane) {
  lane.busy -= 1;
  lane.waiting.shift()?.();
}

// A POST is something the user asked for (Capture, login): it goes at once, not behind
// the page's own polling.
async function request(path, init = {}) {
  if (init.method === 'POST') return fetch(path, { credentials: 'same-origin', ...init });
  const lane = LANES[laneOf(path)];
  await enter(lane, init.signal);
  try {
    return await fetch(path, { credentials: 'same-origin', ...init });
  } finally {
    leave(lane);
  }
}

async function check(r) {
  if (r.status === 401) throw new AuthError();
  if (!r.ok) {
    let message = '';
    let body = null;
    try {
      body = await r.json();
      message = body.error;
    } catch {
      message = r.statusText;
    }
    throw new ApiError(r.status, message, body);
  }
  return r;
}

// `signal` (an AbortSignal) drops the request: a page that is left aborts what it asked.
export async function getJSON(path, { signal } = {}) {
  const r = await request(path, { headers: { Accept: 'application/json' }, signal });
  return (await check(r)).json();
}

export async function getText(path, { signal } = {}) {
  const r = await request(path, { signal });
  return (await check(r)).text();
}

// POSTs a JSON body; the browser adds Origin, which the server checks.
export async function postJSON(path, body) {
  const r = await request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return check(r);
}

// The value of a route, or `fallback` when the agent does not have it (404: no history
// store, a route this agent was built without). Any other failure (503: not ready yet,
// every worker busy, the store unreadable) is thrown: the page keeps what it showed.
export async function getOptional(path, fallback = null, options = {}) {
  try {
    return await getJSON(path, options);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return fallback;
    throw e;
  }
}
