// The web UI in a real browser against a real `eacgm serve` tracing the test programs
// (ctest web_ui, label integration). Usage: node --test ui_test.mjs, with
// EACGM_BIN_DIR=<build dir> (eacgm, fake_nvml/, driver_loop) and EACGM_SHOT_DIR for the
// screenshots. Needs root (eBPF) and /usr/bin/chromium.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launch, screenshot } from './browser.mjs';
import { eventually, freePort, startPrograms, startServe, tempDir } from './serve.mjs';

const BIN = process.env.EACGM_BIN_DIR;
const SHOTS = process.env.EACGM_SHOT_DIR ?? path.join(BIN ?? '.', 'web-screenshots');
if (!BIN) throw new Error('set EACGM_BIN_DIR to the build directory');
if (process.getuid() !== 0) throw new Error('needs root: eacgm serve attaches eBPF uprobes');

function offOrigin(requests, origin) {
  return requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
}

async function liveEvents(page) {
  return Number(await page.getAttribute('#live', 'data-events'));
}

// The GPU rows' cells ({util, sm_active, tensor_active, dram_active}: text and tooltip)
// once GPU `gpu`'s SM activity has a reading or says it has none.
async function gpuNow(page, gpu) {
  const row = page.locator(`#gpu-now tr[data-gpu="${gpu}"]`);
  await eventually(async () => /%|—/.test(await row.locator('td[data-key="sm_active"]').innerText()), 20_000);
  const cells = {};
  for (const key of ['util', 'sm_active', 'tensor_active', 'dram_active']) {
    const td = row.locator(`td[data-key="${key}"]`);
    cells[key] = { text: await td.innerText(), title: await td.getAttribute('title') };
  }
  return cells;
}

async function chartPoints(page, title) {
  return page.evaluate((t) => Number(document.querySelector(`.chart[data-title="${t}"]`)?.dataset.points ?? 0), title);
}

describe('web UI without a token', () => {
  let dir;
  let serve;
  let programs;
  let browser;
  let page;
  let origin;

  before(async () => {
    dir = tempDir();
    programs = startPrograms(BIN, dir);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    serve = await startServe(BIN, dir, { port });
    browser = await launch();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    for (const p of programs ?? []) await p.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the traced process, GPU charts with data and live updates', async () => {
    await page.goto(`${origin}/`);
    const row = page.locator('#processes tbody tr', { hasText: 'driver_loop' });
    await row.first().waitFor({ timeout: 45_000 });
    assert.ok(await eventually(async () => (await chartPoints(page, 'GPU utilization')) > 0, 20_000), 'the utilization chart has points');
    assert.ok((await chartPoints(page, 'Power')) > 0, 'the power chart has points (from the GPU passes)');
    // The fake's GPM: SM and tensor activity beside NVML's utilization, in the rows and charts.
    const gpu0 = await gpuNow(page, 0);
    const gpu1 = await gpuNow(page, 1);
    assert.deepEqual([gpu0.util.text, gpu0.sm_active.text, gpu0.tensor_active.text, gpu0.dram_active.text], ['45%', '80%', '60%', '25%']);
    assert.deepEqual([gpu1.util.text, gpu1.sm_active.text, gpu1.tensor_active.text], ['55%', '75%', '55%']);
    assert.ok((await chartPoints(page, 'SM active')) > 0, 'the SM activity chart has points');
    assert.ok((await chartPoints(page, 'Tensor active')) > 0, 'the tensor activity chart has points');
    assert.match(await page.locator('#gpu-help').innerText(), /Utilization only means a kernel was running/);
    const first = await liveEvents(page);
    assert.ok(await eventually(async () => (await liveEvents(page)) >= first + 3, 15_000), 'summary events arrive over /api/v1/stream');
    // calls/s needs two refreshes
    await eventually(async () => /\d/.test(await row.first().locator("td").nth(7).innerText()), 20_000);
    await screenshot(page, SHOTS, 'overview-light.png');
  });

  it('patches a row off the screen when it comes into view', async () => {
    // A short window puts the processes table below the GPU charts, off the screen.
    await page.setViewportSize({ width: 1440, height: 240 });
    await page.goto(`${origin}/`);
    const row = page.locator('#processes tbody tr', { hasText: 'driver_loop' }).first();
    await row.waitFor({ state: 'attached', timeout: 45_000 });
    const callsRate = () => row.locator('td').nth(7).evaluate((td) => td.textContent);
    assert.equal(await callsRate(), '–', 'calls/s is unknown at the first render');
    // Three table refreshes (one every other wake-up, 3 s apart) while the row is away:
    // its rate stays as first drawn.
    const first = await liveEvents(page);
    assert.ok(await eventually(async () => (await liveEvents(page)) >= first + 14, 30_000), 'summary events arrive');
    assert.equal(await callsRate(), '–', 'a row off the screen is not rewritten');
    await row.scrollIntoViewIfNeeded();
    assert.ok(await eventually(async () => /\d/.test(await callsRate()), 5_000), 'the row shows its rate once in view');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('filters and sorts the processes table', async () => {
    const filter = page.getByRole('searchbox', { name: /Filter processes/ });
    await filter.fill('driver_loop');
    const comms = await page.locator('#processes tbody tr td:first-child').allInnerTexts();
    assert.ok(comms.length >= 1 && comms.every((c) => c.includes('driver_loop')), `only driver_loop rows: ${comms}`);
    await filter.fill('no-such-process-xyz');
    assert.match(await page.locator('#processes tbody').innerText(), /No traced process/);
    await filter.fill('');
    await page.locator('#processes th[data-key="pid"]').click();
    assert.equal(await page.getAttribute('#processes th[data-key="pid"]', 'aria-sort'), 'descending');
    const pids = (await page.locator('#processes tbody tr td:nth-child(2)').allInnerTexts()).map(Number);
    assert.deepEqual(pids, [...pids].sort((a, b) => b - a));
  });

  it('opens the process page with its functions', async () => {
    await page.locator('#processes tbody tr a', { hasText: 'driver_loop' }).first().click();
    await page.waitForURL(/#\/process\/\d+$/);
    const fn = page.locator('#functions tbody tr', { hasText: 'cuLaunchKernel' });
    await fn.first().waitFor({ timeout: 20_000 });
    const cells = await fn.first().locator('td').allInnerTexts();
    assert.ok(Number(cells[2].replace(/[^\d.]/g, '')) > 0, `calls counted: ${cells}`);
    assert.match(await page.locator('#proc-title').innerText(), /driver_loop \(\d+\)/);
    await page.locator('#kernels tbody tr').first().waitFor();
    await page.locator('#flame').filter({ hasText: /No Python samples|samples/ }).waitFor({ timeout: 20_000 }).catch(() => {});
    await screenshot(page, SHOTS, 'process-light.png');
  });

  it('draws a Python program\'s hot spots as a flame graph', async () => {
    const py = programs[1].pid;
    await page.goto(`${origin}/#/process/${py}`);
    await page.locator('#flame svg').waitFor({ timeout: 45_000 });
    await page.locator('#proc-title', { hasText: `python3 (${py})` }).waitFor({ timeout: 15_000 });
    const frames = await page.$$eval('#flame svg g', (gs) => gs.map((g) => g.textContent));
    assert.ok(frames.length > 3, `frames drawn: ${frames.length}`);
    assert.ok(frames.some((t) => t.includes('leaf (')), `the sampled function is a frame: ${frames.slice(0, 8)}`);
    assert.match(await page.locator('#flame-note').innerText(), /\d+ samples/);
    await screenshot(page, SHOTS, 'python-flame.png');
  });

  it('shows the agent page and switches to dark', async () => {
    await page.goto(`${origin}/#/agent`);
    await page.locator('#counters tbody tr', { hasText: 'events' }).first().waitFor({ timeout: 15_000 });
    // Each part draws when its own answer comes.
    await page.locator('#tiles .tile').first().waitFor({ timeout: 15_000 });
    assert.match(await page.locator('#tiles').innerText(), /Ring-buffer drops/);
    assert.match(await page.locator('#store').innerText(), /writing|failing/);
    await page.click('#theme');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await eventually(async () => (await chartPoints(page, 'Agent CPU (% of one core)')) >= 2, 10_000);
    await screenshot(page, SHOTS, 'agent-dark.png');
    await page.goto(`${origin}/`);
    await page.locator('#processes tbody tr', { hasText: 'driver_loop' }).first().waitFor({ timeout: 15_000 });
    await eventually(async () => (await chartPoints(page, 'GPU utilization')) > 0, 10_000);
    await screenshot(page, SHOTS, 'overview-dark.png');
  });

  it('shows the fleet: the job with its rank, the one never seen, the node, and the job\'s page', async () => {
    await page.goto(`${origin}/#/fleet`);
    const row = page.locator('#jobs tbody tr', { hasText: 'ui-job-1' });
    // The history writes an interval every 10 s; the page asks again at each update.
    await row.first().waitFor({ timeout: 40_000 });
    const text = await row.first().innerText();
    assert.match(text, /0 of 2/);
    assert.match(text, /missing 1/);
    assert.ok((await page.locator('#nodes tbody tr').count()) >= 1, 'a node row');
    // The fake's GPU 0 lists driver_loop at 80% SM activity: held, never idle.
    await page.locator('#idle-gpus tbody', { hasText: 'No job or pod held a GPU idle' }).waitFor({ timeout: 40_000 });
    // The job's verdict across nodes (the node's own store): no NCCL call waits, no hang.
    await page.locator('#hangs-note', { hasText: /^No hang across nodes \(node \S+\)\.$/ }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('#hangs .hang, #hangs .bad').count(), 0);
    await screenshot(page, SHOTS, 'fleet.png');
    // Its page: the job report of the store's rows.
    await row.first().locator('a', { hasText: 'ui-job-1' }).click();
    await page.waitForURL(/#\/job\/ui-job-1$/);
    // The last hour reads the raw rows (a day's window reads minutes, rolled up each minute).
    await page.selectOption('#job-window', '1h');
    assert.match(page.url(), /#\/job\/ui-job-1\?since=1h$/);
    const tile = (key) => page.locator(`#job-tiles [data-key="${key}"] .value`).innerText();
    await page.locator('#job-tiles [data-key="gpus"]').waitFor({ timeout: 40_000 });
    assert.equal(await tile('gpus'), '1');
    assert.match(await tile('gpu_hours'), /^0\.0\d\d GPU-h$/);
    assert.notEqual(await tile('gpu_hours'), '0.000 GPU-h');
    assert.equal(await tile('idle_gpu_hours'), '0.00 GPU-h');
    assert.equal(await tile('memory'), '768 MiB');
    assert.match(await page.locator('#job-legend').innerText(), /^Activity: SM activity \(GPM\)\./);
    assert.match(await page.locator('#job-proc-facts').innerText(), /0 of 2 \(missing 1\)/);
    await screenshot(page, SHOTS, 'job-serve.png');
    await page.goto(`${origin}/`);
    await page.locator('#processes tbody tr', { hasText: 'ui-job-1' }).first().waitFor({ timeout: 15_000 });
  });

  it('picks a history range from the store', async () => {
    await page.selectOption('#range', '1h');
    await page.locator('#gpu-source', { hasText: 'history store' }).waitFor({ timeout: 10_000 });
    await page.selectOption('#range', 'live');
  });

  it('made no request to another origin and logged no error', () => {
    assert.deepEqual(offOrigin(browser.log.requests, origin), []);
    assert.deepEqual(browser.log.pageErrors, []);
    assert.deepEqual(browser.log.console, [], browser.log.failed.join('\n'));
    assert.deepEqual(browser.log.failed, []);
  });
});

describe('web UI with a token', () => {
  const token = 'web-ui-test-token_0123456789';
  let dir;
  let serve;
  let programs;
  let browser;
  let page;
  let origin;

  before(async () => {
    dir = tempDir();
    programs = startPrograms(BIN, dir);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    // GPU 1 without GPM (nor most optional fields).
    serve = await startServe(BIN, dir, { port, token, scenario: 'unsupported' });
    browser = await launch();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    for (const p of programs ?? []) await p.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the token, refuses a wrong one and logs in with the right one', async () => {
    await page.goto(`${origin}/`);
    await page.locator('#login-form').waitFor({ timeout: 15_000 });
    await page.fill('#token', 'wrong');
    await page.click('#login-form button[type=submit]');
    await page.locator('#login-error', { hasText: 'Wrong token' }).waitFor();
    await page.fill('#token', token);
    await page.click('#login-form button[type=submit]');
    await page.locator('#processes tbody tr', { hasText: 'driver_loop' }).first().waitFor({ timeout: 45_000 });
    const cookies = await browser.context.cookies(origin);
    const session = cookies.find((c) => c.name === 'eacgm_session');
    assert.ok(session, 'the session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie.includes('eacgm_session')), false, 'the page cannot read it');
    const first = await liveEvents(page);
    assert.ok(await eventually(async () => (await liveEvents(page)) >= first + 2, 15_000), 'the stream works with the cookie');
    assert.equal(await page.isVisible('#logout'), true);
    // A GPU without GPM: a dash that says why, beside its utilization.
    const gpu1 = await gpuNow(page, 1);
    assert.deepEqual([gpu1.sm_active.text, gpu1.tensor_active.text, gpu1.dram_active.text], ['—', '—', '—']);
    assert.equal(gpu1.sm_active.title, 'no GPM profiling counters (Hopper or newer)');
    assert.equal((await gpuNow(page, 0)).sm_active.text, '80%');
    await screenshot(page, SHOTS, 'overview-token.png');
  });

  it('refuses a POST with the cookie from another origin', async () => {
    const cookie = `eacgm_session=${token}`;
    const other = await fetch(`${origin}/api/v1/logout`, { method: 'POST', headers: { Cookie: cookie, Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(other.status, 403);
    const none = await fetch(`${origin}/api/v1/logout`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(none.status, 403, 'a cookie-only POST needs an Origin');
    const noAuth = await fetch(`${origin}/api/v1/processes`);
    assert.equal(noAuth.status, 401);
    const withCookie = await fetch(`${origin}/api/v1/processes`, { headers: { Cookie: cookie } });
    assert.equal(withCookie.status, 200);
  });

  it('logs out', async () => {
    await page.click('#logout');
    await page.locator('#login-form').waitFor({ timeout: 15_000 });
    const cookies = await browser.context.cookies(origin);
    assert.equal(cookies.find((c) => c.name === 'eacgm_session'), undefined);
  });

  it('never put the token in a URL, stayed on its origin, logged no error but the 401s', () => {
    assert.deepEqual(browser.log.requests.filter((u) => u.includes(token)), []);
    assert.deepEqual(offOrigin(browser.log.requests, origin), []);
    assert.deepEqual(browser.log.pageErrors, []);
    // Chromium logs each refused request ("401 (Unauthorized)"): the login flow's own.
    assert.deepEqual(browser.log.console.filter((m) => !/status of 401/.test(m)), [], browser.log.failed.join('\n'));
    assert.deepEqual(browser.log.failed.filter((f) => !f.startsWith('401 ')), []);
  });
});
