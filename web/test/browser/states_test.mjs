// The pages' states in a real browser against a made-up agent (fixture_agent.mjs; ctest
// web_states): a slow history route holds up only its part of a page, a failed or slow
// request keeps what was shown and says how old it is, the fleet page reads per-node
// sums at the store's pace, the overview without a GPU says so once and draws what there
// is, axes never repeat a label, anomaly rows compare like with like, and the process
// page says what its two counts of failed allocations count; the fleet lists the jobs
// holding GPUs idle and a job's page shows its report and captures the job on every node;
// the job's hang across nodes shows its missing and waiting ranks, their stacks and the
// node that did not answer. Usage: node --test
// states_test.mjs, with EACGM_BIN_DIR=<build dir> (its web-dist/) or EACGM_WEB_DIST.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launch, screenshot } from './browser.mjs';
import { HANG_VERDICT, installAgent, NODE_C_ERROR, ORIGIN, PID } from './fixture_agent.mjs';

const BIN = process.env.EACGM_BIN_DIR;
const DIST = process.env.EACGM_WEB_DIST ?? (BIN ? path.join(BIN, 'web-dist') : null);
const SHOTS = process.env.EACGM_SHOT_DIR ?? path.join(BIN ?? '.', 'web-screenshots');
if (!DIST) throw new Error('set EACGM_BIN_DIR to the build directory (or EACGM_WEB_DIST to a build of web/)');

const HISTORY_DELAY_MS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Follows a link as a user does (the app stays loaded), then waits until `ready` holds in
// the page; the time it took, or a failure naming the page and what was missing.
async function openWithin(page, hash, ms, ready, what) {
  const t0 = Date.now();
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  try {
    await page.waitForFunction(ready, null, { timeout: ms, polling: 20 });
  } catch {
    const state = await page.evaluate(() => [...document.querySelectorAll('[data-feed]')].map((e) => `${e.dataset.feed}:${e.dataset.state}`).join(' '));
    assert.fail(`${hash}: ${what} not shown within ${ms} ms (parts: ${state})`);
  }
  return Date.now() - t0;
}

// The state of a part of the page and the line beside its title.
async function part(page, feed) {
  return page.evaluate((name) => {
    const box = document.querySelector(`[data-feed="${name}"]`);
    const status = box?.closest('.card')?.querySelector('.feed-state');
    return { state: box?.dataset.state, status: status?.textContent ?? '', note: box?.previousElementSibling?.textContent ?? '' };
  }, feed);
}

describe('page states', () => {
  let browser;
  let page;
  let agent;

  before(async () => {
    browser = await launch();
    agent = await installAgent(browser.context, DIST);
    page = await browser.context.newPage();
    await page.goto(`${ORIGIN}/#/agent`);
    await page.locator('#counters tbody tr').first().waitFor({ timeout: 15_000 });
  });

  after(async () => {
    await browser?.close();
  });

  it('with a history route delayed 10 s, every page shows its loading state and the rest of its data within 1 s', async () => {
    agent.delays.set('/api/v1/history/', HISTORY_DELAY_MS);
    const rows = (table, text) => `[...document.querySelectorAll('#${table} tbody tr')].some((r) => r.textContent.includes('${text}'))`;
    const pages = [
      ['#/', 'the processes, anomalies and live GPU charts, the history store loading',
        new Function(`return ${rows('processes', 'trainer')} && ${rows('anomalies', 'slow interval')}
          && Number(document.querySelector('.chart[data-title="GPU utilization"]').dataset.points) > 0
          && document.querySelector('#gpu-card').dataset.history === 'loading'
          && /loading/.test(document.querySelector('#gpu-source').textContent)`)],
      ['#/fleet', 'both parts loading',
        () => ['jobs', 'nodes'].every((n) => document.querySelector(`[data-feed="${n}"]`).dataset.state === 'loading' && /Loading/.test(document.querySelector(`[data-feed="${n}"]`).previousElementSibling.textContent))],
      [`#/process/${PID}`, 'the functions, kernels and memory',
        new Function(`return ${rows('functions', 'cudaMalloc')} && ${rows('kernels', 'gemm_kernel')} && ${rows('memory', '17.4k')}`)],
      ['#/agent', 'the tiles and counters', new Function(`return /Ring-buffer drops/.test(document.querySelector('#tiles').textContent) && ${rows('counters', 'events')}`)],
    ];
    for (const [hash, what, ready] of pages) {
      const ms = await openWithin(page, hash, 1000, ready, what);
      console.log(`${hash}: ${what} in ${ms} ms`);
    }
    // Only the nodes' route slow: the jobs are there within 1 s, the nodes loading.
    agent.delays.clear();
    agent.delays.set('/api/v1/history/nodes', HISTORY_DELAY_MS);
    await openWithin(page, '#/', 1000, () => document.querySelector('#processes tbody tr'), 'the processes');
    const t0 = Date.now();
    await openWithin(page, '#/fleet', 1000, () => /job-9/.test(document.querySelector('#jobs tbody').textContent) && document.querySelector('[data-feed="nodes"]').dataset.state === 'loading', 'the jobs, the nodes loading');
    await screenshot(page, SHOTS, 'fleet-loading.png');
    // ... and the nodes once their route answers.
    await page.locator('#nodes tbody tr', { hasText: 'node-a' }).waitFor({ timeout: HISTORY_DELAY_MS + 5000 });
    assert.ok(Date.now() - t0 >= HISTORY_DELAY_MS - 500, 'the nodes came with their delayed answer');
    assert.equal((await part(page, 'nodes')).state, 'ready');
    agent.delays.clear();
  });

  it('keeps the data it showed when a request fails or is slow, and says how old it is', async () => {
    await page.evaluate(() => {
      location.hash = '#/';
    });
    await page.locator('#processes tbody tr', { hasText: 'trainer' }).waitFor({ timeout: 5000 });
    const wait = async (feed, state, timeout = 15_000) => {
      const end = Date.now() + timeout;
      for (;;) {
        const p = await part(page, feed);
        if (p.state === state) return p;
        if (Date.now() > end) assert.fail(`${feed} never ${state}: ${JSON.stringify(p)}`);
        await sleep(100);
      }
    };
    agent.failures.set('/api/v1/processes', 503);
    let p = await wait('processes', 'failed');
    assert.match(p.status, /^updated \d+ s ago, the agent could not answer \(all workers busy\)$/);
    assert.ok(await page.locator('#processes tbody tr', { hasText: 'trainer' }).count(), 'the rows stay');
    agent.failures.set('/api/v1/processes', 'cut');
    await page.waitForFunction(() => /the agent did not answer$/.test(document.querySelector('[data-feed="processes"]').closest('.card').querySelector('.feed-state').textContent), null, { timeout: 15_000 });
    await screenshot(page, SHOTS, 'overview-failed.png');
    agent.failures.clear();
    await wait('processes', 'ready');
    assert.equal((await part(page, 'processes')).status, '');
    // A request out for more than 5 s: the data stays, and the line says it waits.
    agent.delays.set('/api/v1/anomalies', 9000);
    p = await wait('anomalies', 'slow', 20_000);
    assert.match(p.status, /^updated \d+ s ago, waiting for the agent$/);
    assert.ok(await page.locator('#anomalies tbody tr', { hasText: 'slow interval' }).count(), 'the anomalies stay');
    agent.delays.clear();
    await wait('anomalies', 'ready', 20_000);
  });

  it('reads the fleet as per-node sums at the store\'s pace, never the process list', async () => {
    await page.evaluate(() => {
      location.hash = '#/fleet';
    });
    await page.locator('#nodes tbody tr', { hasText: 'node-a' }).waitFor({ timeout: 5000 });
    const from = agent.requests.length;
    await sleep(12_000);
    const asked = agent.requests.slice(from).map((r) => r.path);
    assert.deepEqual(asked.filter((p) => p.startsWith('/api/v1/history/processes')), [], 'the process list is never read');
    const nodes = agent.requests.slice(from).filter((r) => r.path.startsWith('/api/v1/history/nodes'));
    assert.ok(nodes.length >= 1 && nodes.length <= 2, `the nodes asked once or twice in 12 s (the store takes an interval every 10 s): ${nodes.length}`);
    assert.ok(nodes.every((r) => r.bytes < 2000), 'each answer is a few hundred bytes');
    const text = await page.locator('#nodes tbody tr', { hasText: 'node-a' }).innerText();
    assert.match(text, /8100/);
    // A list's first page says how many of the window's rows it shows.
    assert.equal(await page.locator('#nodes-note').innerText(), 'the 2 with most calls of 3');
    assert.match(await page.locator('#jobs-note').innerText(), /every node of the store$/);
  });

  it('without a GPU, the overview says so once and shows the traced calls, no empty chart', async () => {
    agent.gpus = 0;
    await page.goto(`${ORIGIN}/#/`);
    await page.locator('#calls-card .chart[data-points]:not([data-points="0"])').waitFor({ timeout: 10_000 });
    await page.locator('#processes tbody tr', { hasText: 'trainer' }).waitFor({ timeout: 5000 });
    const said = await page.locator('#gpu-none').innerText();
    assert.match(said, /^No GPU on this machine/);
    const body = await page.locator('main').innerText();
    assert.equal(body.split('No GPU').length - 1, 1, 'said once');
    assert.doesNotMatch(body, /Time:/);
    assert.doesNotMatch(body, /after the history store/);
    const visible = await page.$$eval('#gpu-charts .chart', (cs) => cs.filter((c) => c.offsetParent !== null).length);
    assert.equal(visible, 0, 'no GPU chart is drawn');
    const ticks = await page.getAttribute('#calls-card .chart', 'data-y-ticks');
    assert.ok(ticks && new Set(ticks.split('|')).size === ticks.split('|').length, `calls axis: ${ticks}`);
    await screenshot(page, SHOTS, 'overview-no-gpu.png');
    agent.gpus = 2;
  });

  it('never repeats an axis label, even for values under 1%', async () => {
    agent.util = 0.6;
    await page.goto(`${ORIGIN}/#/`);
    await page.locator('.chart[data-title="GPU utilization"][data-y-ticks]').waitFor({ timeout: 10_000 });
    for (const title of ['GPU utilization', 'SM active', 'Tensor active', 'GPU memory used', 'Power', 'Temperature']) {
      const ticks = (await page.getAttribute(`.chart[data-title="${title}"]`, 'data-y-ticks')).split('|');
      assert.ok(ticks.length >= 2, `${title}: ${ticks}`);
      ticks.forEach((t, i) => assert.ok(i === 0 || t !== ticks[i - 1], `${title}: ${ticks.join(' ')}`));
    }
    agent.util = 40;
  });

  it('shows an anomaly\'s duration beside a comparable median, and explains the score', async () => {
    const interval = page.locator('#anomalies tbody tr', { hasText: 'slow interval' });
    await interval.waitFor({ timeout: 10_000 });
    const cells = await interval.locator('td').allInnerTexts();
    // The interval's mean call (2.4 × 1.20 µs), not its length (1.03 s), beside the median.
    assert.match(cells[4], /^2\.88 µs/);
    assert.match(cells[4], /mean of 500 calls in 1\.03 s/);
    assert.equal(cells[5], '1.20 µs');
    assert.equal(cells[6], '×2.4');
    const call = await page.locator('#anomalies tbody tr', { hasText: 'slow call' }).locator('td').allInnerTexts();
    assert.deepEqual([call[4], call[5], call[6]], ['39.2 µs', '1.42 µs', '×27.6']);
    assert.match(await page.getAttribute('#anomalies th[data-key="score"]', 'title'), /standard deviations/);
    assert.match(await page.locator('#anoms ~ .legend').innerText(), /^Score: how unusual/);
  });

  it('lists a GPU health event beside the process on that GPU and the call it was waiting in', async () => {
    await page.goto(`${ORIGIN}/#/`);
    const row = page.locator('#gpu-events tbody tr', { hasText: 'XID 79' });
    await row.waitFor({ timeout: 10_000 });
    const cells = await row.locator('td').allInnerTexts();
    assert.deepEqual([cells[1], cells[2], cells[3]], ['1', 'xid', 'XID 79']);
    assert.match(cells[4], new RegExp(`^${PID} trainer \\(rank 0, job job-9\\) in ncclAllReduce for 12\\.00 s$`));
    assert.equal(await page.locator(`#gpu-events a[href="#/process/${PID}"]`).count(), 1);
    assert.match(await page.locator('#gpu-events-total').innerText(), /^1 since the agent started/);
  });

  it('says what the memory ledger\'s failed allocations count beside the functions\' errors', async () => {
    await page.goto(`${ORIGIN}/#/process/${PID}`);
    await page.locator('#memory tbody tr', { hasText: '17.4k' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#memory th[data-key="failed"]').innerText(), 'Failed allocs');
    const note = await page.locator('#memory-failed').innerText();
    assert.match(note, /^Failed allocs: 17\.4k allocation calls that returned an error, of every allocation function/);
    assert.match(note, /cudaMalloc 14\.6k, cudaMallocHost 2800/);
    // A function counted in the kernel: its errors are those of its timed calls, said so.
    const launch = await page.locator('#functions tbody tr', { hasText: 'cudaLaunchKernel' }).locator('td').nth(3).innerText();
    assert.equal(launch, '85 of 85 timed');
    await screenshot(page, SHOTS, 'process-memory.png');
  });

  it('lists the jobs holding GPUs idle and opens a job\'s page from the fleet', async () => {
    agent.gpus = 2;
    await page.goto(`${ORIGIN}/#/fleet`);
    const idle = page.locator('#idle-gpus tbody tr');
    await idle.filter({ hasText: 'notebook-0' }).waitFor({ timeout: 10_000 });
    assert.deepEqual((await idle.locator('td:first-child').allInnerTexts()).map((t) => t.trim()), ['job-9', 'ml/notebook-0'], 'most idle cost first');
    assert.match(await idle.first().innerText(), /4\.00 GPU-h\s+50\.0%\s+1h30m\s+10\.00 EUR/);
    await page.locator('#jobs tbody tr a', { hasText: 'job-9' }).click();
    await page.waitForURL(/#\/job\/job-9$/);
    const tile = (key) => page.locator(`#job-tiles [data-key="${key}"] .value`).innerText();
    await page.locator('#job-tiles [data-key="gpu_hours"]').waitFor({ timeout: 5000 });
    assert.equal(await tile('gpu_hours'), '8.00 GPU-h');
    assert.equal(await tile('idle_gpu_hours'), '4.00 GPU-h');
    assert.equal(await tile('memory'), '60.0 GiB');
    assert.equal(await tile('energy_kwh'), '3.20 kWh');
    assert.equal(await tile('idle_cost'), '10.00 EUR');
    assert.match(await page.locator('#job-legend').innerText(), /Activity: SM activity \(GPM\)\. Idle: a held GPU's activity under 5%/);
    // Where the time went: the fields the agent sent, and only those.
    assert.match(await page.locator('[data-section="host_waits"]').innerText(), /Waiting on the host\s+2880\.00 s, 20\.0% of the wall time/);
    assert.match(await page.locator('[data-section="host_waits"] tbody').innerText(), /sync\s+9000\s+2880\.00 s\s+20\.0%/);
    assert.match(await page.locator('[data-section="nccl_gpu"]').innerText(), /not measured/);
    assert.match(await page.locator('[data-section="top_kernels"] tbody').innerText(), /gemm_kernel\s+5000\s+0\s+–\s+–/);
    await page.locator('#job-proc-facts', { hasText: 'missing 2' }).waitFor({ timeout: 5000 });
    assert.match(await page.locator('#job-proc-facts').innerText(), /0-1,3 of 4 \(missing 2\)/);
    await screenshot(page, SHOTS, 'job.png');
    // The job's capture: one POST for every node, the merged trace saved, each node's outcome said.
    const download = page.waitForEvent('download', { timeout: 10_000 });
    await page.click('#job-capture');
    const file = await download;
    assert.match(file.suggestedFilename(), /^eacgm-job-job-9-.*\.json$/);
    const saved = JSON.parse(fs.readFileSync(await file.path(), 'utf8'));
    assert.equal(saved.eacgm_job_capture.job, 'job-9', 'the trace itself, not the outcome around it');
    assert.equal(saved.traceEvents.length, 2);
    const posted = agent.requests.filter((r) => r.path === '/api/v1/capture/job');
    assert.equal(posted.length, 1);
    assert.equal(posted[0].method, 'POST');
    assert.deepEqual(JSON.parse(posted[0].body), { job: 'job-9', seconds: 5 });
    await page.locator('#job-capture-status', { hasText: '2 of 4 ranks on 2 nodes' }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator('#job-capture-nodes li[data-node="node-a"]').innerText(), 'node-a: 2 of 2 ranks captured');
    assert.match(await page.locator('#job-capture-nodes li[data-node="node-b"]').innerText(), /^node-b: 0 of 2 ranks captured; rank 2 not: cannot reach the agent at http:\/\/node-b:9977/);
    assert.ok(await page.locator('#job-capture-nodes li[data-node="node-b"].bad').count(), 'a node not captured stands out');
    // A refusal (another capture running, the store away): its reason, the outcome cleared.
    agent.failures.set('/api/v1/capture/job', 503);
    await page.click('#job-capture');
    await page.locator('#job-capture-status', { hasText: 'Capture failed: all workers busy' }).waitFor({ timeout: 5000 });
    assert.ok(await page.locator('#job-capture-nodes').isHidden());
    agent.failures.delete('/api/v1/capture/job');
    const asked = agent.requests.length;
    await page.selectOption('#job-window', '7d');
    assert.match(page.url(), /#\/job\/job-9\?since=7d$/);
    await page.waitForFunction(() => document.querySelector('[data-feed="job-report"]').dataset.state === 'ready');
    assert.ok(agent.requests.slice(asked).some((r) => r.path === '/api/v1/history/report?since=7d&job=job-9'), 'the report asked over 7 days');
    // A pod without a job: its page asks by pod.
    await page.goto(`${ORIGIN}/#/fleet`);
    await page.locator('#idle-gpus tbody tr a', { hasText: 'notebook-0' }).click();
    await page.locator('#job-title', { hasText: 'Pod ml/notebook-0' }).waitFor({ timeout: 5000 });
    assert.equal(await tile('tensor_active_mean'), '–');
    assert.equal(await page.locator('#job-time section').count(), 0);
    // No such job: said in place of the figures.
    await page.goto(`${ORIGIN}/#/job/nope`);
    await page.locator('#job-none', { hasText: 'No GPU held by nope in the last 24h.' }).waitFor({ timeout: 5000 });
  });

  it('shows the job\'s hang across nodes with the ranks\' stacks, and nothing alarming without one', async () => {
    // No hang: a quiet line on the fleet page, no card on the overview.
    agent.hang = false;
    await page.goto(`${ORIGIN}/#/fleet`);
    await page.locator('#hangs-note', { hasText: 'No hang across nodes' }).waitFor({ timeout: 10_000 });
    assert.match(await page.locator('#hangs-note').innerText(), /^No hang across nodes \(node node-a, with 8 ranks of other nodes read 0 s ago\)\.$/);
    assert.equal(await page.locator('#hangs .bad, #hangs .hang, #hangs details').count(), 0, 'nothing alarming');
    let asked = agent.requests.length;
    await page.goto(`${ORIGIN}/#/`);
    await page.locator('#processes tbody tr', { hasText: 'trainer' }).waitFor({ timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector('[data-feed="job-verdict"]').dataset.state === 'ready', null, { timeout: 10_000 });
    assert.ok(await page.locator('#hangs-card').isHidden(), 'the overview shows no hang card');
    assert.ok(agent.requests.slice(asked).some((r) => r.path === '/api/v1/inflight?stacks=1'), 'asked with the stacks');

    // A hang across three nodes: node-a's and node-b's ranks with stacks, node-c unreachable.
    agent.hang = true;
    await page.goto(`${ORIGIN}/#/fleet`);
    const hang = page.locator('#hangs .hang[data-comm="0x0000000000c0ffee"]');
    await hang.waitFor({ timeout: 10_000 });
    assert.equal(await hang.locator('.verdict').innerText(), HANG_VERDICT);
    assert.equal(await hang.locator('dd[data-fact="missing"] .bad').innerText(), 'rank 5 on node node-b');
    assert.match(await hang.locator('dd[data-fact="missing"]').innerText(), /never entered ncclAllReduce #18204$/);
    assert.equal(await hang.locator('dd[data-fact="waiting"]').innerText(), 'ranks 0-4,6-11 on nodes node-a,node-b,node-c in ncclAllReduce #18204 for 94 s');
    // One group per stack: the missing rank's, the waiting ranks' on node-a and node-b,
    // and node-c's ranks without one (their node's agent did not answer).
    const groups = hang.locator('details.rank-stack');
    assert.deepEqual((await groups.locator('summary').allInnerTexts()).map((t) => t.trim()), [
      'rank 5 on node node-b (pid 5005) missing, in cudaStreamSynchronize',
      'ranks 0-4,6,7 on nodes node-a,node-b waiting, in ncclAllReduce',
      'ranks 8-11 on node node-c no stack',
    ]);
    const waiting = groups.nth(1);
    assert.ok(await waiting.locator('.py-stack').isHidden(), 'a stack is folded until asked for');
    await waiting.locator('summary').click();
    assert.deepEqual(await waiting.locator('.py-stack li').allInnerTexts(), ['[nccl] ncclAllReduce', 'all_reduce (torch/distributed/distributed_c10d.py:2501)', 'train_step (train.py:88)', 'main (train.py:120)']);
    await groups.nth(0).locator('summary').click();
    assert.match(await groups.nth(0).locator('.py-stack li').nth(1).innerText(), /^__next__ \(torch\/utils\/data\/dataloader\.py:631\)$/);
    await groups.nth(2).locator('summary').click();
    assert.equal(await groups.nth(2).locator('.stack-error').innerText(), NODE_C_ERROR);
    assert.equal(await page.locator('#hangs .unanswered li[data-node="node-c"].bad').innerText(), NODE_C_ERROR);
    assert.match(await page.locator('#hangs .ended li').innerText(), /^over rank 7 on node node-b never entered ncclBroadcast #3/);
    await screenshot(page, SHOTS, 'fleet-hang.png');
    await page.locator('#hangs-card').screenshot({ path: path.join(SHOTS, 'fleet-hang-card.png') }); // docs/ui-fleet-hang.png
    // Polled every other wake of the page (about 6 s), the opened stacks staying open.
    asked = agent.requests.length;
    await sleep(8000);
    const polls = agent.requests.slice(asked).filter((r) => r.path.startsWith('/api/v1/inflight'));
    assert.ok(polls.length >= 1 && polls.length <= 2, `the verdict asked once or twice in 8 s: ${polls.length}`);
    assert.ok(await waiting.locator('.py-stack').isVisible(), 'an opened stack stays open across updates');

    // The overview shows the card while the hang lasts; the job page, for a job on its nodes.
    await page.goto(`${ORIGIN}/#/`);
    await page.locator('#hangs-card .verdict', { hasText: HANG_VERDICT }).waitFor({ timeout: 10_000 });
    await screenshot(page, SHOTS, 'overview-hang.png');
    await page.goto(`${ORIGIN}/#/job/job-9`);
    await page.locator('#hangs-card .verdict', { hasText: HANG_VERDICT }).waitFor({ timeout: 10_000 });

    // An agent without a store says why it gives no verdict.
    agent.hang = false;
    agent.noStore = true;
    await page.goto(`${ORIGIN}/#/fleet`);
    await page.locator('#hangs-note', { hasText: 'This agent has no store' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#hangs .hang').count(), 0);
    agent.noStore = false;
  });

  it('logged no error but the failures it asked for', () => {
    assert.deepEqual(browser.log.pageErrors, []);
    const unexpected = browser.log.console.filter((m) => !/status of 503|ERR_CONNECTION_RESET|ERR_FAILED/.test(m));
    assert.deepEqual(unexpected, []);
  });
});
