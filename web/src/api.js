// The agent's API on this origin. The browser sends the session cookie (set by the login
// form) by itself; a 401 means the agent wants a token and the login form is shown.

export class AuthError extends Error {
  constructor() {
    super('this agent needs a token');
  }
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
  }
}

// At most this many requests at once: the agent serves a fixed number of connections
// (8 by default, the event stream holding one), shared with Prometheus and other clients,
// and the browser would open up to six.
const MAX_IN_FLIGHT = 2;
let inFlight = 0;
const waiting = [];

async function limited(fn) {
  if (inFlight >= MAX_IN_FLIGHT) await new Promise((resolve) => waiting.push(resolve));
  inFlight += 1;
  try {
    return await fn();
  } finally {
    inFlight -= 1;
    waiting.shift()?.();
  }
}

function request(path, init) {
  return limited(() => fetch(path, { credentials: 'same-origin', ...init }));
}

async function check(r) {
  if (r.status === 401) throw new AuthError();
  if (!r.ok) {
    let message = '';
    try {
      message = (await r.json()).error;
    } catch {
      message = r.statusText;
    }
    throw new ApiError(r.status, message);
  }
  return r;
}

export async function getJSON(path) {
  const r = await request(path, { headers: { Accept: 'application/json' } });
  return (await check(r)).json();
}

export async function getText(path) {
  const r = await request(path);
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
// store) or is not ready yet (503).
export async function getOptional(path, fallback = null) {
  try {
    return await getJSON(path);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 503)) return fallback;
    throw e;
  }
}
