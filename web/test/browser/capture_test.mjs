// The process page's Capture button in a real browser against a real `eacgm serve`
// (ctest web_ui_capture, label integration): it POSTs {"pid":N,"seconds":5} to
// /api/v1/capture and saves the answer, which must be a Perfetto/Chrome trace of that
// process's calls. Exits 77 (skipped) when the agent has no capture route.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { launch, screenshot } from './browser.mjs';
import { freePort, startPrograms, startServe, tempDir } from './serve.mjs';

const BIN = process.env.EACGM_BIN_DIR;
const SHOTS = process.env.EACGM_SHOT_DIR ?? path.join(BIN ?? '.', 'web-screenshots');
if (!BIN) throw new Error('set EACGM_BIN_DIR to the build directory');
if (process.getuid() !== 0) throw new Error('needs root: eacgm serve attaches eBPF uprobes');

const dir = tempDir();
const programs = startPrograms(BIN, dir);
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const serve = await startServe(BIN, dir, { port });

async function cleanup() {
  await serve.stop();
  for (const p of programs) await p.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

const probe = await fetch(`${origin}/api/v1/capture`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
const probeBody = await probe.text();
if (probe.status === 404 && probeBody.includes('no such path')) {
  console.log('SKIPPED: this eacgm has no POST /api/v1/capture route');
  await cleanup();
  process.exit(77);
}

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanup();
});

it('saves a 5-second trace of the process from the Capture button', async () => {
  const page = await browser.context.newPage();
  const pid = programs[0].pid;
  await page.goto(`${origin}/#/process/${pid}`);
  await page.locator('#functions tbody tr', { hasText: 'cuLaunchKernel' }).first().waitFor({ timeout: 45_000 });
  const download = page.waitForEvent('download', { timeout: 60_000 });
  await page.click('#capture');
  const file = await download;
  assert.match(file.suggestedFilename(), new RegExp(`^eacgm-${pid}-.*\\.json$`));
  const saved = path.join(dir, file.suggestedFilename());
  await file.saveAs(saved);
  const trace = JSON.parse(fs.readFileSync(saved, 'utf8'));
  const events = Array.isArray(trace) ? trace : trace.traceEvents;
  assert.ok(Array.isArray(events), 'a Chrome/Perfetto trace: an array or {traceEvents: [...]}');
  const calls = events.filter((e) => e.ph === 'X' || e.ph === 'B' || e.ph === 'i');
  assert.ok(calls.length > 0, `the trace has the process's calls (${events.length} events)`);
  assert.ok(calls.some((e) => String(e.name).includes('cu')), 'CUDA driver calls are in it');
  assert.ok(calls.every((e) => e.pid === undefined || e.pid === pid), 'only that process');
  await page.locator('#capture-status', { hasText: 'Saved' }).waitFor();
  await screenshot(page, SHOTS, 'capture.png');
  assert.deepEqual(browser.log.requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('blob:')), []);
  assert.deepEqual(browser.log.console, []);
  assert.deepEqual(browser.log.pageErrors, []);
});
