// The app: a hash router over four pages (overview, process, fleet, agent), the range picker,
// the theme, live updates, and the login form when the agent asks for a token.
import './style.css';
import { AuthError, postJSON } from './api.js';
import { Live } from './live.js';
import { agentPage } from './pages/agent.js';
import { fleetPage } from './pages/fleet.js';
import { loginPage } from './pages/login.js';
import { overviewPage } from './pages/overview.js';
import { processPage } from './pages/process.js';

const app = document.getElementById('app');
const rangeSelect = document.getElementById('range');
const themeButton = document.getElementById('theme');
const logoutButton = document.getElementById('logout');
const live = new Live(document.getElementById('live'));

const ctx = {
  ticks: 0,
  range: () => rangeSelect.value,
};

let page = null;
let busy = false;

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

rangeSelect.addEventListener('change', () => {
  page?.rangeChanged();
  refresh();
});

logoutButton.addEventListener('click', async () => {
  try {
    await postJSON('/api/v1/logout', {});
  } finally {
    location.reload();
  }
});

function showError(e) {
  let box = document.getElementById('error');
  if (!box) {
    box = document.createElement('p');
    box.id = 'error';
    box.className = 'error-bar';
    app.prepend(box);
  }
  box.textContent = e ? `The agent did not answer: ${e.message}` : '';
  box.hidden = !e;
}

function needLogin() {
  live.stop();
  page?.unmount();
  page = null;
  loginPage(app, () => {
    logoutButton.hidden = false;
    route();
  });
}

async function refresh() {
  if (!page || busy) return;
  busy = true;
  try {
    await page.refresh();
    ctx.ticks += 1;
    showError(null);
    live.start();
  } catch (e) {
    if (e instanceof AuthError) needLogin();
    else showError(e);
  } finally {
    busy = false;
  }
}

function route() {
  page?.unmount();
  const hash = location.hash || '#/';
  const proc = hash.match(/^#\/process\/(\d+)$/);
  const current = proc ? '' : hash.startsWith('#/agent') ? 'agent' : hash.startsWith('#/fleet') ? 'fleet' : 'overview';
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === current);
  ctx.ticks = 0;
  if (proc) page = processPage(app, ctx, proc[1]);
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
