// Screenshots of the web UI showing what an agent answered on another machine (the GPU
// node, which has no browser): tests/gpu/web_ui_check.sh keeps each route the pages read
// and a few stream events in ui_routes.json; this serves the UI's own build and those
// answers to headless Chromium, with the page's clock set back to the recording's time,
// and saves the overview, the traced process and the agent pages.
// Usage: node test/browser/replay_shots.mjs ROUTES_JSON DIST_DIR OUT_DIR [PREFIX]
//   DIST_DIR: the Vite build (build/web-dist); PREFIX: of the file names (default "ui-").
import fs from 'node:fs';
import path from 'node:path';
import { launch } from './browser.mjs';

const [routesFile, dist, out, prefix = 'ui-'] = process.argv.slice(2);
if (!routesFile || !dist || !out) throw new Error('usage: replay_shots.mjs ROUTES_JSON DIST_DIR OUT_DIR [PREFIX]');
const record = JSON.parse(fs.readFileSync(routesFile, 'utf8'));
const ORIGIN = 'http://eacgm-node.replay';
const types = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };

// The recorded answer for a path: exact, else the same route with other parameters. A
// route read twice in the recording (the tables' rates) gives its later answer from its
// second request on.
const asked = new Map();
function answer(pathAndQuery) {
  const n = (asked.get(pathAndQuery) ?? 0) + 1;
  asked.set(pathAndQuery, n);
  if (n > 1 && record.later?.[pathAndQuery]) return record.later[pathAndQuery];
  const exact = record.routes[pathAndQuery];
  if (exact) return exact;
  const pathname = pathAndQuery.split('?')[0];
  const near = Object.entries(record.routes).find(([k]) => k.split('?')[0] === pathname);
  return near ? near[1] : { status: 404, type: 'application/json', body: '{"error":"not recorded"}' };
}

const browser = await launch();
try {
  const context = browser.context;
  await context.route(`${ORIGIN}/**`, (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/' || url.pathname.startsWith('/assets/')) {
      const file = path.join(dist, url.pathname === '/' ? 'index.html' : url.pathname);
      if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: '' });
      return route.fulfill({ status: 200, contentType: types[path.extname(file)] ?? 'application/octet-stream', body: fs.readFileSync(file) });
    }
    if (url.pathname === '/api/v1/stream') {
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: `retry: 1000\n\n${record.stream ?? ''}` });
    }
    const a = answer(url.pathname + url.search);
    return route.fulfill({ status: a.status, contentType: a.type ?? 'application/json', body: a.body });
  });
  // The page's clock: the recording's, so its live window holds the recorded points.
  const shiftMs = Date.now() - record.recorded_at_unix * 1000;
  await context.addInitScript((shift) => {
    const now = Date.now.bind(Date);
    Date.now = () => now() - shift;
  }, shiftMs);
  const page = await context.newPage();
  fs.mkdirSync(out, { recursive: true });
  const shots = [
    ['overview', '#/', async () => {
      await page.locator('.chart[data-points]:not([data-points="0"])').first().waitFor({ timeout: 20_000 });
      await new Promise((r) => setTimeout(r, 6500)); // the tables' second reading: their rates
    }],
    ['process', `#/process/${record.pid}`, async () => page.locator('table').nth(1).waitFor({ timeout: 20_000 })],
    ['agent', '#/agent', async () => page.locator('.tile').first().waitFor({ timeout: 20_000 })],
  ];
  for (const [name, hash, ready] of shots) {
    await page.goto(`${ORIGIN}/${hash}`);
    await ready();
    await new Promise((r) => setTimeout(r, 1500)); // the charts' and tables' second draw
    const file = path.join(out, `${prefix}${name}.png`);
    await page.screenshot({ path: file, fullPage: false });
    console.log(`wrote ${file}`);
  }
} finally {
  await browser.close();
}
