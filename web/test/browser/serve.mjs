// Starts `eacgm serve` for the browser tests as tests/integration/serve_support.h does:
// the fake NVML's GPUs, a SQLite history in a fresh folder, a free loopback port; and
// the traced test programs beside it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export function tempDir(prefix = 'eacgm-web-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function eventually(fn, timeoutMs = 30_000, stepMs = 200) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) return null;
    await sleep(stepMs);
  }
}

// A child process whose output is kept, stopped by SIGTERM (then SIGKILL) at the end.
export class Child {
  constructor(argv, { env = {}, cwd } = {}) {
    this.argv = argv;
    this.out = '';
    this.err = '';
    this.proc = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (d) => (this.out += d));
    this.proc.stderr.on('data', (d) => (this.err += d));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
  }
  get pid() {
    return this.proc.pid;
  }
  async stop(timeoutMs = 10_000) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    const r = await this.exited;
    clearTimeout(t);
    return r;
  }
}

// scenario: the fake NVML's ("full": both GPUs with GPM; "unsupported": GPU 1 without).
export async function startServe(binDir, dir, { port, token, scenario = 'full', extra = [] } = {}) {
  const argv = [path.join(binDir, 'eacgm'), 'serve', '--listen', `127.0.0.1:${port}`, '--store', `sqlite:${path.join(dir, 'eacgm.db')}`, ...extra];
  if (token) {
    const file = path.join(dir, 'token');
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
    argv.push('--token-file', file);
  }
  const serve = new Child(argv, {
    cwd: dir,
    env: {
      EACGM_NVML_LIBRARY: path.join(binDir, 'fake_nvml', 'libnvidia-ml.so.1'),
      EACGM_FAKE_NVML_SCENARIO: scenario,
      EACGM_FAKE_NVML_GPU_COMM: 'driver_loop',
    },
  });
  const ready = await eventually(async () => {
    if (serve.proc.exitCode !== null) throw new Error('exited');
    const r = await fetch(`http://127.0.0.1:${port}/readyz`);
    return r.status === 200;
  }, 60_000);
  if (!ready) {
    await serve.stop();
    throw new Error(`eacgm serve did not become ready: ${serve.err}`);
  }
  return serve;
}

// The test programs: a driver-API loop on the stub libcuda, two threads (rank 0 of Slurm
// job ui-job-1), and a Python
// program whose stacks the agent samples (the flame graph), long enough to outlast the
// test (stopped at its end).
const PYTHON_WORK = `
import time
def leaf():
    return sum(i * i for i in range(3000))
def middle():
    return leaf() + leaf()
while True:
    middle()
    time.sleep(0.002)
`;

export function startPrograms(binDir, dir) {
  fs.writeFileSync(path.join(dir, 'hot.py'), PYTHON_WORK);
  return [
    // A rank of a two-rank batch job whose other rank never comes (the fleet page's job row).
    new Child([path.join(binDir, 'driver_loop'), '--threads', '2', '--iters', '100000000', '--work-us', '500'], {
      cwd: dir,
      env: { SLURM_JOB_ID: 'ui-job-1', RANK: '0', WORLD_SIZE: '2' },
    }),
    new Child(['python3', path.join(dir, 'hot.py')], { cwd: dir }),
  ];
}
