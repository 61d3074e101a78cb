// A made-up agent for the browser tests that need answers a real one gives only now and
// then: every route the pages read, answered through the browser's request routing with
// the UI's own build (DIST_DIR), its figures fixed (a process whose allocations fail, a
// slow call and a slow interval, two nodes of a job, GPUs or none), and any route delayed,
// failed or cut off on demand. No eacgm runs, so these tests need no root.
import fs from 'node:fs';
import path from 'node:path';

export const ORIGIN = 'http://eacgm-agent.test';
const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };
const S = 1e9;

export const PID = 4242;

function json(body, status = 200) {
  return { status, type: 'application/json', body: JSON.stringify(body) };
}

// GPU 0's GPM activity; the other GPUs have no GPM.
const GPM = { sm_active: 0.9, tensor_active: 0.7, dram_active: 0.3 };

// `gpus`: 0 for a machine without one; `util`: the utilization every point reads (a
// tiny one makes an axis of small steps).
function answers(o, url) {
  const now = Date.now();
  const nowNs = now * 1e6;
  const route = url.pathname;
  const q = url.searchParams;
  const gpuList = Array.from({ length: o.gpus }, (_, i) => i);
  const header = { time_ns: nowNs, sequence: 7 };
  const window = { from_ns: nowNs - 900 * S, to_ns: nowNs, tier: 'raw' };
  switch (route) {
    case '/api/v1/gpus':
      return json({ ...header, gpus: gpuList.map((i) => ({ index: i, name: 'Fixture GPU', utilization_gpu_percent: o.util, memory_used_bytes: 0, power_usage_milliwatts: 71_000, temperature_gpu_celsius: 40, gpm_supported: i === 0, gpm: i === 0 ? GPM : null })) });
    case '/api/v1/series': {
      const n = Math.min(Number(q.get('window') ?? 900), 900);
      const t0 = Math.floor(now / 1000) - n;
      const points = [];
      for (let t = t0 + 1; t <= t0 + n; ++t) {
        points.push({ t, calls: 3000, errors: 20, domains: { cuda: 1000, cuda_driver: 2000 }, gpus: gpuList.map((g) => ({ gpu: g, util: o.util, sm_active: g === 0 ? GPM.sm_active : null, tensor_active: g === 0 ? GPM.tensor_active : null, dram_active: g === 0 ? GPM.dram_active : null, memory_used_bytes: 0 })) });
      }
      return json({ ...header, interval_s: 1, window_s: n, points });
    }
    case '/api/v1/processes':
      return json({
        ...header,
        processes: [
          { pid: PID, comm: 'trainer', calls: 1_200_000 + Math.floor(now / 10), errors: 17_400, gpus: [], cmdline: 'python3 train.py', exited: false, job: 'job-9', rank: 0, world_size: 4 },
          { pid: 4343, comm: 'loader', calls: 5_000, errors: 0, gpus: [], cmdline: 'loader --fast', exited: false },
        ],
        folded: 0,
      });
    case '/api/v1/work':
      return json({ ...header, processes: [{ pid: PID, comm: 'trainer', kernels: 9000, memsets: 10, copies: 5, errors: 0 }] });
    case '/api/v1/overhead':
      return json({ ...header, calibrated: true, budget: 0.01, over_budget: 0, reduced_probes: 0, max_sample_shift: 0, duty_fraction: 1, attached_share: 1, hit_cost_ns: { entry: 800, entry_return: 1500 }, processes: [{ pid: PID, cpu_share: 0.004 }] });
    case '/api/v1/anomalies':
      return json({
        ...header,
        anomalies: [{ ts_ns: nowNs - 60 * S, pid: PID, tid: PID, comm: 'trainer', domain: 'cuda', name: 'cudaStreamSynchronize', dur_ns: 39_200, bytes: 0, median_ns: 1_420, score: 7.4, args: {}, op: null, sampled: false, calls: 1, repeats: 3, last_ts_ns: nowNs - 30 * S, max_dur_ns: 52_000 }],
        intervals: [{ start_ns: nowNs - 20 * S, end_ns: nowNs - 20 * S + 1_030_000_000, domain: 'cuda', name: 'cudaLaunchKernel', bytes_class: 0, calls: 500, ratio: 2.4, score: 26.1, median_ns: 1_200, dur_ns: 2_880 }],
        total: 3, interval_total: 1, level_shifts: 0, functions: 12, untracked_calls: 0, coalesced: 2, hangs: [], hang_total: 0,
      });
    case '/api/v1/gpu_events':
      return json({
        ...header,
        events: o.gpus ? [{ ts_ns: nowNs - 45 * S, gpu: 1, uuid: 'GPU-fixture-1', kind: 'xid', detail: 'XID 79', count: 1,
          processes: [{ pid: PID, comm: 'trainer', rank: 0, local_rank: 0, world_size: 4, job: 'job-9',
            calls: [{ tid: PID, domain: 'nccl', name: 'ncclAllReduce', ts_ns: nowNs - 57 * S, age_ns: 12 * S }] }] }] : [],
        total: o.gpus ? 1 : 0, dropped: 0,
      });
    case '/api/v1/process':
      return json({
        ...header,
        pid: Number(q.get('pid')),
        comm: 'trainer',
        functions: [
          { domain: 'cuda', function: 'cudaMalloc', calls: 20_000, errors: 14_600, nested: 0, timed: 20_000, counted: 0, sampled: false, total_ns: 9e8, p50_ns: 30_000, p99_ns: 90_000, max_ns: 120_000 },
          { domain: 'cuda', function: 'cudaMallocHost', calls: 3_000, errors: 2_800, nested: 0, timed: 3_000, counted: 0, sampled: false, total_ns: 2e8, p50_ns: 60_000, p99_ns: 99_000, max_ns: 150_000 },
          { domain: 'cuda', function: 'cudaLaunchKernel', calls: 762_407, errors: 85, nested: 0, timed: 85, counted: 762_407, sampled: true, total_ns: 1.4e9, p50_ns: 1_000, p99_ns: 36_000, max_ns: 36_351 },
        ],
        work: [{ stream: 20480, kind: 'kernel', name: 'gemm_kernel', direction: '', count: 9000, graph: 0, errors: 0, bytes: 0 }],
        waits: { pid: PID, comm: 'trainer', exited: false, wall_ns: 60 * S, waits: [{ kind: 'stream_sync', calls: 900, timed: 900, total_ns: 3 * S, estimated: false, share: 0.05, p50_ns: 2e6, p99_ns: 9e6, max_ns: 1e7 }] },
        overhead: { pid: PID, cpu_share: 0.004 },
      });
    case '/api/v1/kernels':
      return json({ ...header, kernels: [{ name: 'gemm_kernel', launches: 9000, errors: 0, shapes: [{ grid: [64, 1, 1], block: [256, 1, 1], launches: 9000 }] }], folded: 0 });
    case '/api/v1/memory':
      return json({ ...header, processes: [{ pid: PID, comm: 'trainer', device: 0, allocations: 5_600, allocated_bytes: 5e9, frees: 5_000, live_allocations: 600, live_bytes: 6e8, peak_bytes: 9e8, unknown_frees: 0, double_frees: 0, failed_allocations: 17_400, failed_allocations_by_function: { cudaMalloc: 14_600, cudaMallocHost: 2800 }, failed_frees: 0, size_histogram: [], leaks: { count: 0, bytes: 0, largest: [] }, exited: false }], exited_dropped: 0, overflow_calls: 0 });
    case '/api/v1/nccl':
      return json({ ...header, collectives: [], folded: 0, gpu_unjoined: 0, communicators: [], untracked_calls: 0 });
    case '/api/v1/python/folded':
      return { status: 200, type: 'text/plain', body: '' };
    case '/api/v1/inflight':
      return json({ ...header, min_age_ns: 5 * S, in_flight: 0, calls: [], over_cap: 0, communicators: [], hangs: [], hang_total: 0,
        job: jobVerdict({ ...o, stacks: o.stacks && q.get('stacks') === '1' }, nowNs) });
    case '/api/v1/counters':
      return json({ ...header, counters: { events: 48, drops: 0, probes: 187 } });
    case '/metrics':
      return {
        status: 200,
        type: 'text/plain; version=0.0.4',
        body: ['eacgm_agent_cpu_seconds_total 12.5', 'eacgm_agent_resident_memory_bytes 52428800', 'eacgm_ring_buffer_drops_total 0', 'eacgm_events_total 48', 'eacgm_probes_attached 187', 'eacgm_libraries_attached 3', `eacgm_agent_start_time_seconds ${Math.floor(now / 1000) - 600}`, 'eacgm_store_up 1', 'eacgm_store_size_bytes 1048576'].join('\n') + '\n',
      };
    case '/api/v1/history/gpus': {
      const step = 10;
      const t0 = Math.floor(now / 1000 / step) * step;
      const points = [];
      for (let i = 60; i >= 1; --i) for (const g of gpuList) points.push({ node: 'node-a', gpu: g, t_ns: (t0 - i * step) * S, utilization_mean_percent: o.util, memory_used_mean_bytes: 0, power_mean_watts: 70, temperature_max_celsius: 40 });
      return json({ window: { ...window, step_ns: step * S }, points });
    }
    case '/api/v1/history/jobs':
      return json({ window, total: 1, next: null, jobs: [{ job: 'job-9', nodes: ['node-a', 'node-b', 'node-c'], ranks: [0, 1, 3], world_size: 4, missing_ranks: [2], pods: [], processes: 3, running: 3, calls: 2_000_000, errors: 17_400, first_ns: nowNs - 800 * S, last_ns: nowNs }] });
    case '/api/v1/history/report': {
      // job-9 held its GPUs half idle; a notebook pod without a job held one idle for
      // longer, but at a lower price in total.
      const rows = [
        { job: 'job-9', nodes: ['node-a', 'node-b'], gpus: 4, gpu_hours: 8, active_gpu_hours: 3.6, idle_gpu_hours: 4, unmeasured_gpu_hours: 0, idle_share: 0.5, longest_idle_s: 5400, activity_basis: 'sm_active', tensor_active_mean: 0.42, memory_peak_bytes: 60 * 2 ** 30, memory_capacity_bytes: 80 * 2 ** 30, energy_kwh: 3.2, energy_basis: 'counter', share_basis: 'sole', cost: 20, idle_cost: 10, first_ns: nowNs - 7200 * S, last_ns: nowNs,
          time: { wall_s: 14_400, wall_basis: 'process_life', processes: 3, host_wait_s: 2880, host_wait_share: 0.2, host_waits: [{ kind: 'sync', calls: 9000, seconds: 2880, share: 0.2, estimated: false }],
            gpu_time_measured: false, gpu_s: null, gpu_timed_launches: 0, nccl_gpu_s: null, nccl_share: null, nccl_timed_launches: 0, top_kernels: [{ name: 'gemm_kernel', launches: 5000, timed: 0, gpu_s: null, share: null }] } },
        { job: 'ml/notebook-0', nodes: ['node-b'], gpus: 1, gpu_hours: 6, active_gpu_hours: 0.1, idle_gpu_hours: 5.8, unmeasured_gpu_hours: 0, idle_share: 0.9667, longest_idle_s: 20_000, activity_basis: 'utilization', tensor_active_mean: null, memory_peak_bytes: 2 ** 30, memory_capacity_bytes: 16 * 2 ** 30, energy_kwh: 0.4, energy_basis: 'power', share_basis: 'sole', cost: 3, idle_cost: 2.9, first_ns: nowNs - 86_000 * S, last_ns: nowNs },
      ];
      const one = (by) => rows.filter((r) => (by === 'job' ? r.job === q.get('job') && !r.job.includes('/') : r.job === q.get('pod')));
      const jobs = q.has('job') ? one('job') : q.has('pod') ? one('pod') : rows;
      return json({ window: { ...window, tier: 'raw' }, selector: { by: q.has('job') ? 'job' : q.has('pod') ? 'pod' : 'all', value: q.get('job') ?? q.get('pod') }, idle_threshold: 0.05, gpu_hour_price: 2.5, currency: 'EUR', jobs });
    }
    case '/api/v1/history/nodes':
      // The first page of three nodes (a page of two).
      return json({ window, total: 3, next: 'c2', nodes: [
        { node: 'node-a', processes: 8100, running: 40, jobs: 1, calls: 1_500_000, errors: 17_400, last_ns: nowNs },
        { node: 'node-b', processes: 2, running: 2, jobs: 1, calls: 500_000, errors: 0, last_ns: nowNs },
      ] });
    case '/api/v1/history/processes':
      return json({ window, processes: Array.from({ length: 8100 }, (_, i) => ({ node: 'node-a', pid: 10_000 + i, start_ns: nowNs - 800 * S, comm: 'short', cmdline: 'short --task', job: null, first_ns: nowNs - 800 * S, last_ns: nowNs - 700 * S, exited: true, calls: 100, errors: 0 })) });
    case '/api/v1/capture/job': {
      // job-9's four ranks: node-a's captured, node-b's agent gone.
      const rank = (node, r, captured) => ({ rank: r, pid: 4242 + r, captured, error: captured ? null : 'cannot reach the agent at http://node-b:9977: Connection refused' });
      const trace = { traceEvents: [0, 1].map((r) => ({ ph: 'M', name: 'process_name', pid: r + 1, args: { name: `node-a/rank ${r}: trainer (pid ${4242 + r})` } })), eacgm_job_capture: { job: 'job-9', parts: [{}, {}], missing: [{}, {}] } };
      return json({ job: 'job-9', seconds: 5, store: 'postgresql://db/fleet', captured: 2, asked: 4,
        nodes: [{ node: 'node-a', agent: 'http://node-a:9977', ranks: [rank('node-a', 0, true), rank('node-a', 1, true)] },
          { node: 'node-b', agent: 'http://node-b:9977', ranks: [rank('node-b', 2, false), rank('node-b', 3, false)] }],
        not_captured: ['node-b/rank 2 (pid 4244) not captured: ...', 'node-b/rank 3 (pid 4245) not captured: ...'], trace });
    }
    default:
      return json({ error: `no such path: ${route}` }, 404);
  }
}

// The job's verdict across nodes (/api/v1/inflight's `job`): with `hang`, communicator
// 0x...c0ffee of 12 ranks hangs: rank 5 on node-b never entered ncclAllReduce #18204,
// ranks 0-4 and 6-11 on node-a, node-b and node-c wait; node-a and node-b read their
// ranks' stacks, node-c's agent did not answer. Without, the store holds no hang.
export const HANG_VERDICT = 'rank 5 on node node-b never entered ncclAllReduce #18204; ranks 0-4,6-11 on nodes node-a,node-b,node-c waiting for 94 s';
export const NODE_C_ERROR = "node node-c's agent at http://node-c:9977 did not answer: no answer within 2 s; last seen 40 s ago";
const WAITING_STACK = ['[nccl] ncclAllReduce', 'all_reduce (torch/distributed/distributed_c10d.py:2501)', 'train_step (train.py:88)', 'main (train.py:120)'];
const LOADER_STACK = ['[cuda] cudaStreamSynchronize', '__next__ (torch/utils/data/dataloader.py:631)', 'train_step (train.py:80)', 'main (train.py:120)'];

function jobVerdict(o, nowNs) {
  const empty = { store: true, node: 'node-a', read_age_ns: 400_000_000, other_ranks: 8, communicators: [], ended: [], hang_total: 1 };
  const ended = [{ comm_id: '0x00000000000beef1', nranks: 12, name: 'ncclBroadcast', instance: 3, age_ns: 0, in: [], missing: [], unreported: [], nodes: ['node-a', 'node-b'], hang: true,
    start_ns: nowNs - 300 * S, end_ns: nowNs - 240 * S, verdict: 'rank 7 on node node-b never entered ncclBroadcast #3; ranks 0-6,8-11 on nodes node-a,node-b waiting for 60 s' }];
  if (o.noStore) return { store: false, node: '', read_age_ns: 0, other_ranks: 0, communicators: [], ended: [], hang_total: 0 };
  if (!o.hang) return { ...empty, ended: o.hangEnded ? ended : [] };
  const node = (r) => (r < 4 ? 'node-a' : r < 8 ? 'node-b' : 'node-c');
  const rank = (r, missing) => {
    const base = { node: node(r), rank: r, pid: 5000 + r, entered: missing ? 18203 : 18204, finished: 18203, waiting_ns: missing ? 0 : 94 * S - r * 1e6, collective: missing ? 'ncclAllGather' : 'ncclAllReduce', report_age_ns: r < 4 ? 0 : 600_000_000 };
    if (!o.stacks) return base;
    if (node(r) === 'node-c') return { ...base, python_stack: null, stack_error: NODE_C_ERROR };
    return { ...base, python_stack: missing ? LOADER_STACK : WAITING_STACK, stack_call: missing ? 'cudaStreamSynchronize' : 'ncclAllReduce', stack_tid: 5000 + r };
  };
  const ranks = Array.from({ length: 12 }, (_, r) => r);
  const comm = { comm_id: '0x0000000000c0ffee', nranks: 12, name: 'ncclAllReduce', instance: 18204, age_ns: 94 * S, in: ranks.filter((r) => r !== 5).map((r) => rank(r, false)), missing: [rank(5, true)], unreported: [],
    nodes: ['node-a', 'node-b', 'node-c'], hang: true, start_ns: nowNs - 89 * S, end_ns: null, verdict: HANG_VERDICT };
  const stacks = o.stacks ? [{ node: 'node-b', agent: 'http://node-b:9977', pids: [5004, 5005, 5006, 5007], error: null, answer_age_ns: 1_000_000_000 },
    { node: 'node-c', agent: 'http://node-c:9977', pids: [5008, 5009, 5010, 5011], error: NODE_C_ERROR, answer_age_ns: null }] : undefined;
  return { ...empty, communicators: [comm], ended, hang_total: 2, ...(stacks ? { stacks } : {}) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Serves the UI and the made-up agent to `context`; the returned object changes its
// answers while a test runs: gpus, util, hang (and hangEnded, stacks, noStore); delays and failures by path prefix (delay: ms;
// fail: an HTTP status, answered with {"error":...}, or 'cut' for a connection that
// breaks); `requests` lists what was asked, with the answer's size.
export async function installAgent(context, dist, options = {}) {
  if (!fs.existsSync(path.join(dist, 'index.html'))) throw new Error(`${dist} holds no build of the UI (cmake --build build --target eacgm_web)`);
  const agent = { gpus: 2, util: 40, hang: false, hangEnded: false, stacks: true, noStore: false, delays: new Map(), failures: new Map(), requests: [], ...options };
  const match = (map, p) => [...map.entries()].find(([prefix]) => p.startsWith(prefix))?.[1];
  await context.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    const p = url.pathname;
    if (p === '/' || p.startsWith('/assets/')) {
      const file = path.join(dist, p === '/' ? 'index.html' : p);
      if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: '' });
      return route.fulfill({ status: 200, contentType: TYPES[path.extname(file)] ?? 'application/octet-stream', body: fs.readFileSync(file) });
    }
    if (p === '/api/v1/stream') {
      // One summary event per connection; the page's EventSource comes back a second later.
      const event = JSON.stringify({ sequence: 1, time_ns: Date.now() * 1e6, functions: [], counters: {} });
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: `retry: 1000\n\nevent: summary\ndata: ${event}\n\n` });
    }
    const asked = { path: p + url.search, at: Date.now(), bytes: 0, method: route.request().method(), body: route.request().postData() };
    agent.requests.push(asked);
    const delay = match(agent.delays, p);
    if (delay) await sleep(delay);
    const failure = match(agent.failures, p);
    try {
      if (failure === 'cut') return await route.abort('connectionreset');
      const a = failure ? json({ error: failure === 503 ? 'all workers busy' : `failed (${failure})` }, failure) : answers(agent, url);
      asked.bytes = a.body.length;
      return await route.fulfill({ status: a.status, contentType: a.type, body: a.body });
    } catch {
      // the page dropped the request (it was left) while it waited
    }
  });
  return agent;
}
