// The app: a hash router over the pages (overview, process, fleet, job, agent), the range picker,
// the theme, live updates, and the login form when the agent asks for a token.
import './style.css';
import { AuthError, postJSON } from './api.js';
import { parseJobHash } from './job_report.js';
import { Live } from './live.js';
import { agentPage } from './pages/agent.js';
import { fleetPage } from './pages/fleet.js';
import { jobPage } from './pages/job.js';
import { loginPage } from './pages/login.js';
import { overviewPage } from './pages/overview.js';
import { processPage } from './pages/process.js';

const app = document.getElementById('app');
const rangeSelect = document.getElementById('range');
const themeButton = document.getElementById('theme');
const logoutButton = document.getElementById('logout');
const live = new Live(document.getElementById('live'));

const ctx = {
  range: () => rangeSelect.value,
  // A part of the page got data: the agent answers, so the stream is opened.
  onData: () => live.start(),
  // The agent wants a token.
  onAuth: () => needLogin(),
};

let page = null;

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  page?.retheme();
}

function initialTheme() {
  const saved = localStorage.getItem('eacgm-theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

themeButton.addEventListener('click', () => {
  const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  localStorage.setItem('eacgm-theme', next);
  applyTheme(next);
});

rangeSelect.addEventListener('change', () => page?.rangeChanged());

logoutButton.addEventListener('click', async () => {
  try {
    await postJSON('/api/v1/logout', {});
  } finally {
    location.reload();
  }
});

function needLogin() {
  if (!page) return; // the form is up already (several parts were refused at once)
  live.stop();
  page?.unmount();
  page = null;
  loginPage(app, () => {
    logoutButton.hidden = false;
    route();
  });
}

// Each part of the page asks for its own data and draws it when it comes: a slow route
// holds up only its part.
function refresh() {
  page?.refresh();
}

function route() {
  page?.unmount();
  const hash = location.hash || '#/';
  const proc = hash.match(/^#\/process\/(\d+)$/);
  const job = parseJobHash(hash);
  const current = proc ? '' : job || hash.startsWith('#/fleet') ? 'fleet' : hash.startsWith('#/agent') ? 'agent' : 'overview';
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === current);
  if (proc) page = processPage(app, ctx, proc[1]);
  else if (job) page = jobPage(app, ctx, job.job, job.window);
  else if (hash.startsWith('#/agent')) page = agentPage(app, ctx);
  else if (hash.startsWith('#/fleet')) page = fleetPage(app, ctx);
  else page = overviewPage(app, ctx);
  refresh();
}

live.subscribe(() => refresh());
window.addEventListener('hashchange', route);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh();
});
applyTheme(initialTheme());
// A session cookie is HttpOnly (the page cannot see it); the server says whether one is
// in use through this non-secret marker cookie.
logoutButton.hidden = !document.cookie.split('; ').some((c) => c.startsWith('eacgm_login=1'));
route();
