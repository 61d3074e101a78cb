// The web UI's first paint and its live CPU cost (BENCHMARKS.md, "Web UI"). Starts
// `eacgm serve` with the fake NVML showing 8 GPUs and PROCS (200) traced driver_loop
// processes that launch a few times a second (ranks of 10 Slurm jobs), opens PAGE (the
// overview, or the fleet) in headless Chromium and reports:
//   - first paint: the page's first-contentful-paint (Performance API), and the time
//     from navigation until the page holds its data (the overview: every process and
//     GPU chart; the fleet: its jobs and nodes);
//   - live cost: the renderer process's CPU time (/proc/PID/stat utime+stime) over
//     SECONDS (30) while the page updates itself, as a share of one core; and the
//     browser's other processes (GPU, network) beside it; the requests the page made and
//     the bytes it read;
//   - with --clients N: N pages of PAGE open at once, and the agent's CPU (eacgm serve,
//     /proc) over SECONDS beside its CPU with no page open.
// Usage: EACGM_BIN_DIR=build node web/bench/ui_bench.mjs [--page overview|fleet]
//          [--procs 200] [--seconds 30] [--clients N] [--assets DIR] [--profile]
// --assets serves the page from a Vite build in DIR (`npm run build -- --outDir DIR`)
// instead of the files embedded in the agent, to measure a change without relinking it.
import fs from 'node:fs';
import os from 'node:os';
import { launch } from '../test/browser/browser.mjs';
import { Child, eventually, freePort, startServe, tempDir } from '../test/browser/serve.mjs';

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const PROCS = arg('--procs', 200);
const SECONDS = arg('--seconds', 30);
const ASSETS = (() => {
  const i = args.indexOf('--assets');
  return i >= 0 ? args[i + 1] : null;
})();
const PAGE = (() => {
  const i = args.indexOf('--page');
  return i >= 0 ? args[i + 1] : 'overview';
})();
const CLIENTS = arg('--clients', 0);
const BIN = process.env.EACGM_BIN_DIR;
if (!BIN) throw new Error('set EACGM_BIN_DIR to the build directory');

const ticks = 100; // USER_HZ on Linux
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks; // utime, stime
}
// Chromium rewrites its command line (one string with spaces), so it is read as words.
function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
  } catch {
    return [];
  }
}
function descendants(root) {
  const kids = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    for (const k of kids.get(p) ?? []) {
      out.push(k);
      stack.push(k);
    }
  }
  return out;
}


// The page, and when it holds its data: the overview every process (up to its table's
// 500 rows) and a GPU chart with points; the fleet its jobs and nodes.
const HASH = PAGE === 'fleet' ? '#/fleet' : '';
const FILLED = PAGE === 'fleet'
  ? () => document.querySelector('#jobs tbody tr td.num') !== null && document.querySelector('#nodes tbody tr td.num') !== null
  : (n) => document.querySelectorAll('#processes tbody tr').length >= Math.min(n, 500) && Number(document.querySelector('.chart')?.dataset.points ?? 0) > 0;

// The requests a page made to the agent since it loaded, and the bytes of their answers
// (Resource Timing; its buffer is made large enough at the start of each page).
async function pageReads(page) {
  return page.evaluate(() => {
    const api = performance.getEntriesByType('resource').filter((e) => /\/api\/|\/metrics/.test(e.name) && !e.name.includes('/api/v1/stream'));
    return { requests: api.length, bytes: api.reduce((s, e) => s + (e.encodedBodySize || 0), 0) };
  });
}

// With --assets, the page's own files come from that directory.
async function routeAssets(b) {
  await b.context.addInitScript(() => performance.setResourceTimingBufferSize(100000));
  if (ASSETS) {
    const types = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };
    await b.context.route(
      (url) => url.pathname === '/' || url.pathname.startsWith('/assets/'),
      (route) => {
        const path = new URL(route.request().url()).pathname;
        const file = `${ASSETS}${path === '/' ? '/index.html' : path}`;
        if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: 'not in --assets' });
        return route.fulfill({ status: 200, contentType: types[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', body: fs.readFileSync(file) });
      },
    );
  }
}

const dir = tempDir('eacgm-web-bench-');
process.env.EACGM_FAKE_NVML_GPUS = '8';
const programs = [];
for (let i = 0; i < PROCS; ++i) {
  const env = { SLURM_JOB_ID: `bench-${i % 10}`, RANK: String(Math.floor(i / 10)), WORLD_SIZE: String(Math.ceil(PROCS / 10)) };
  programs.push(new Child([`${BIN}/driver_loop`, '--threads', '1', '--iters', '100000000', '--sleep-us', '250000'], { cwd: dir, env }));
}
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const serve = await startServe(BIN, dir, { port });
let browser;
try {
  let seen = 0;
  const listed = await eventually(async () => {
    const doc = await (await fetch(`${origin}/api/v1/processes`)).json();
    seen = doc.processes.filter((p) => (p.cmdline ?? '').includes('driver_loop')).length;
    return seen >= PROCS ? doc.processes.length : null;
  }, 120_000, 1000);
  if (!listed) throw new Error(`the agent listed ${seen} of the ${PROCS} driver_loop processes (${programs.filter((p) => p.proc.exitCode !== null).length} exited)`);
  const gpus = (await (await fetch(`${origin}/api/v1/gpus`)).json()).gpus.length;
  // The history store takes an interval every 10 s: the fleet page's lists need one.
  const jobs = await eventually(async () => (await (await fetch(`${origin}/api/v1/history/jobs?since=15m`)).json()).jobs.length, 60_000, 1000);
  console.log(`agent ready: ${listed} processes listed, ${gpus} GPUs, ${jobs} jobs in the store, ${os.cpus().length} CPUs (${os.cpus()[0].model})`);

  // What the page asks for on load, one at a time: each route's time (median of 3).
  const routes = PAGE === 'fleet'
    ? ['/', '/api/v1/history/jobs?since=15m', '/api/v1/history/nodes?since=15m', '/api/v1/history/processes?since=15m']
    : ['/', '/api/v1/history/gpus?since=15m&step=10s', '/api/v1/series?window=900', '/api/v1/gpus', '/api/v1/processes', '/api/v1/work', '/api/v1/overhead', '/api/v1/anomalies'];
  for (const r of routes) {
    const times = [];
    let size = 0;
    for (let i = 0; i < 3; ++i) {
      const t = performance.now();
      size = (await (await fetch(origin + r)).arrayBuffer()).byteLength;
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`route ${r}: ${times[1].toFixed(1)} ms, ${(size / 1024).toFixed(1)} KiB`);
  }

  browser = await launch();
  await routeAssets(browser);
  const results = [];
  for (let run = 0; run < 5; ++run) {
    const page = await browser.context.newPage();
    const t0 = Date.now();
    await page.goto(`${origin}/${HASH}`, { waitUntil: 'commit' });
    await page.waitForFunction(FILLED, PROCS, { timeout: 30_000, polling: 20 });
    const data = Date.now() - t0;
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);
    const nav = await page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0];
      return { dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd };
    });
    results.push({ fcp, data, ...nav });
    await page.close();
  }
  results.sort((a, b) => a.data - b.data);
  for (const r of results) console.log(`first paint: fcp ${r.fcp?.toFixed(0)} ms, DOMContentLoaded ${r.dcl.toFixed(0)} ms, ${PAGE} filled ${r.data} ms`);
  const median = results[Math.floor(results.length / 2)];
  console.log(`first paint median: fcp ${median.fcp?.toFixed(0)} ms; the ${PAGE} page's data shown after ${median.data} ms`);

  // Live cost: one page open on the overview, measured over SECONDS, in a browser of its
  // own (the first-paint pages' renderers gone).
  await browser.close();
  browser = await launch();
  await routeAssets(browser);
  const page = await browser.context.newPage();
  for (const p of browser.context.pages()) if (p !== page) await p.close(); // the first, blank one
  await page.goto(`${origin}/${HASH}`);
  await page.waitForFunction(FILLED, PROCS, { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 3000));
  const readBefore = await pageReads(page);
  const browserPid = browser.context.browser()?.process?.()?.pid;
  const roots = browserPid ? [browserPid] : [];
  if (!roots.length) {
    // launchPersistentContext: find Chromium by its profile flag among our children.
    for (const pid of descendants(process.pid)) if (cmdline(pid)[0]?.includes('chromium') && !cmdline(pid).some((a) => a.startsWith('--type='))) roots.push(pid);
  }
  const all = [...new Set(roots.flatMap((r) => [r, ...descendants(r)]))];
  // The page's renderers: not the one of Chromium's own WebUI (--top-chrome-webui).
  const renderers = all.filter((p) => cmdline(p).includes('--type=renderer') && !cmdline(p).includes('--top-chrome-webui'));
  const before = new Map(all.map((p) => [p, cpuSeconds(p)]));
  const eventsBefore = Number(await page.getAttribute('#live', 'data-events'));
  const profile = args.includes('--profile');
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const m0 = await metrics();
  const traceEvents = [];
  if (profile) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
    cdp.on('Tracing.dataCollected', (e) => traceEvents.push(...e.value));
    await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,v8,blink,cc', transferMode: 'ReportEvents' });
  }
  const t1 = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const m1 = await metrics();
  const busy = ['TaskDuration', 'ScriptDuration', 'LayoutDuration', 'RecalcStyleDuration'].map((k) => `${k} ${(((m1[k] - m0[k]) / SECONDS) * 100).toFixed(2)}%`);
  console.log(`renderer main thread (CDP Performance): ${busy.join(', ')}; layouts ${m1.LayoutCount - m0.LayoutCount}, style recalcs ${m1.RecalcStyleCount - m0.RecalcStyleCount}, JS heap ${(m1.JSHeapUsedSize / 1048576).toFixed(1)} MiB`);
  if (profile) {
    const { profile: prof } = await cdp.send('Profiler.stop');
    const self = new Map();
    const dt = new Map();
    prof.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
    for (const n of prof.nodes) {
      const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + (dt.get(n.id) ?? 0));
    }
    const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
    for (const [k, us] of top) console.log(`  profile: ${(us / 1000).toFixed(0)} ms ${k}`);
    // The renderer's trace events by name: time in each kind of work (events nest, so
    // a parent's time includes its children's; read them as a breakdown, not a sum).
    const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
    await cdp.send('Tracing.end');
    await done;
    const byName = new Map();
    for (const e of traceEvents) if (e.ph === 'X' && e.dur) byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur);
    const names = [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
    for (const [k, us] of names) console.log(`  trace: ${(((us / 1e6) / SECONDS) * 100).toFixed(2)}% ${k}`);
  }
  const wall = (Date.now() - t1) / 1000;
  const eventsAfter = Number(await page.getAttribute('#live', 'data-events'));
  const share = (pids) => pids.reduce((s, p) => s + (fs.existsSync(`/proc/${p}`) ? cpuSeconds(p) - before.get(p) : 0), 0) / wall;
  const typeOf = (p) => (cmdline(p).includes('--top-chrome-webui') ? "browser's WebUI " : '') + (cmdline(p).find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser');
  console.log(`live: ${eventsAfter - eventsBefore} stream events in ${wall.toFixed(1)} s`);
  for (const p of all) console.log(`  ${typeOf(p)} (pid ${p}): ${(share([p]) * 100).toFixed(2)}% of one core`);
  console.log(`live cost: renderer ${(share(renderers) * 100).toFixed(2)}% of one core; all Chromium processes ${(share(all) * 100).toFixed(2)}%`);
  const readAfter = await pageReads(page);
  const reads = readAfter.requests - readBefore.requests;
  const kib = (readAfter.bytes - readBefore.bytes) / 1024;
  console.log(`live reads: ${reads} requests, ${kib.toFixed(1)} KiB in ${wall.toFixed(1)} s (${(kib / wall).toFixed(1)} KiB/s)`);

  // The agent's cost of CLIENTS pages of PAGE open at once, beside its cost with none.
  if (CLIENTS > 0) {
    await browser.close();
    browser = null;
    const agentShare = async (seconds) => {
      const c0 = cpuSeconds(serve.pid);
      const t = Date.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return (cpuSeconds(serve.pid) - c0) / ((Date.now() - t) / 1000);
    };
    const idle = await agentShare(SECONDS);
    browser = await launch();
    await routeAssets(browser);
    const pages = [];
    for (let i = 0; i < CLIENTS; ++i) {
      const p = await browser.context.newPage();
      await p.goto(`${origin}/${HASH}`);
      pages.push(p);
    }
    await Promise.all(pages.map((p) => p.waitForFunction(FILLED, PROCS, { timeout: 120_000 })));
    await new Promise((r) => setTimeout(r, 3000));
    const busy = await agentShare(SECONDS);
    console.log(`agent (eacgm serve): ${(idle * 100).toFixed(2)}% of one core with no page open, ${(busy * 100).toFixed(2)}% with ${CLIENTS} ${PAGE} pages open: ${(((busy - idle) * 100)).toFixed(2)}% for the pages`);
  }
} finally {
  await browser?.close();
  await serve.stop();
  for (const p of programs) await p.stop(2000);
  fs.rmSync(dir, { recursive: true, force: true });
}
