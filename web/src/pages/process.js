// One process: its functions (p50/p99), GPU work and kernel shapes, memory ledger and
// leaks, host waits, NCCL communicators and skew, Python hot spots, and a Capture
// button that saves a 5-second Perfetto trace.
import { ApiError, getJSON, getOptional, getText, postJSON } from '../api.js';
import { saveFile } from '../download.js';
import { drawFlame } from '../flame.js';
import { Feed, Feeds } from '../feed.js';
import { bytes, count, duration, esc, percent, processName } from '../format.js';
import { Table } from '../table.js';

export const CAPTURE_SECONDS = 5;

export function processPage(root, ctx, pid) {
  root.innerHTML = `
    <section class="card head"><h2><span id="proc-title">Process ${pid}</span> <span id="proc-state" class="feed-state muted small"></span></h2><p id="proc-facts" class="muted"></p>
      <div class="actions"><button id="capture" type="button" title="record every traced call of this process for ${CAPTURE_SECONDS} s and save it as a Perfetto trace">Capture ${CAPTURE_SECONDS} s</button>
      <span id="capture-status" class="muted small" role="status"></span></div></section>
    <section class="card"><h2>Functions</h2><div id="functions"></div></section>
    <div class="two">
      <section class="card"><h2>Kernels <span id="kernels-state" class="feed-state muted small"></span></h2><div id="kernels"></div></section>
      <section class="card"><h2>Memory</h2><div id="memory"></div><p id="memory-failed" class="muted small" hidden></p><h3>Leaks</h3><div id="leaks"></div></section>
    </div>
    <div class="two">
      <section class="card"><h2>Host waits</h2><div id="waits"></div></section>
      <section class="card"><h2>NCCL</h2><div id="nccl"></div></section>
    </div>
    <section class="card"><h2>Python hot spots <span id="flame-note" class="muted small"></span></h2><div id="flame" class="flame"></div></section>`;

  const functions = new Table(root.querySelector('#functions'), {
    id: 'functions',
    filterFields: ['function', 'domain'],
    filterLabel: 'Filter functions',
    sort: { key: 'total_ns', dir: -1 },
    empty: 'No traced call of this process yet.',
    columns: [
      { key: 'function', label: 'Function', html: (r) => `<code>${esc(r.function)}</code>` },
      { key: 'domain', label: 'Domain' },
      { key: 'calls', label: 'Calls', num: true, html: (r) => `${r.estimated ? `<span class="est" title="estimate ±${count(r.calls_error)}">~</span>` : ''}${count(r.calls)}` },
      { key: 'errors', label: 'Errors', num: true, title: 'calls that returned an error; of a function counted in the kernel (always-on), those of its timed calls', html: (r) => functionErrors(r) },
      { key: 'p50_ns', label: 'p50', num: true, html: (r) => duration(r.p50_ns) },
      { key: 'p99_ns', label: 'p99', num: true, html: (r) => duration(r.p99_ns) },
      { key: 'max_ns', label: 'Max', num: true, html: (r) => duration(r.max_ns) },
      { key: 'total_ns', label: 'Total', num: true, html: (r) => duration(r.total_ns) },
    ],
  });
  const kernels = new Table(root.querySelector('#kernels'), {
    id: 'kernels',
    sort: { key: 'count', dir: -1 },
    empty: 'No GPU work seen.',
    limit: 100,
    columns: [
      { key: 'name', label: 'Kernel / operation', html: (r) => `<code>${esc(r.name || r.kind)}</code>${r.direction ? ` ${esc(r.direction)}` : ''}` },
      { key: 'stream', label: 'Stream', html: (r) => `<code>0x${Number(r.stream).toString(16)}</code>` },
      { key: 'count', label: 'Count', num: true, html: (r) => count(r.count) },
      { key: 'shapes', label: 'Shapes (grid × block)', html: (r) => r.shapes },
    ],
  });
  const memory = new Table(root.querySelector('#memory'), {
    id: 'memory',
    sort: { key: 'device', dir: 1 },
    empty: 'No allocation traced.',
    columns: [
      { key: 'device', label: 'Device', num: true },
      { key: 'live_bytes', label: 'Live', num: true, html: (r) => bytes(r.live_bytes) },
      { key: 'peak_bytes', label: 'Peak', num: true, html: (r) => bytes(r.peak_bytes) },
      { key: 'allocations', label: 'Allocs', num: true, html: (r) => count(r.allocations) },
      { key: 'frees', label: 'Frees', num: true, html: (r) => count(r.frees) },
      { key: 'failed', label: 'Failed allocs', num: true, title: 'allocation calls of any allocation function that returned an error (see below)', html: (r) => (r.failed ? `<span class="bad">${count(r.failed)}</span>` : '0') },
    ],
  });
  const leaks = new Table(root.querySelector('#leaks'), {
    id: 'leaks',
    sort: { key: 'size', dir: -1 },
    empty: 'No leak (leaks are known once the process exits).',
    columns: [
      { key: 'ptr', label: 'Address', html: (r) => `<code>${esc(r.ptr)}</code>` },
      { key: 'size', label: 'Size', num: true, html: (r) => bytes(r.size) },
      { key: 'kind', label: 'Allocated by' },
    ],
  });
  const waits = new Table(root.querySelector('#waits'), {
    id: 'waits',
    sort: { key: 'total_ns', dir: -1 },
    empty: 'No host wait seen.',
    columns: [
      { key: 'kind', label: 'Kind' },
      { key: 'calls', label: 'Waits', num: true, html: (r) => `${r.estimated ? '~' : ''}${count(r.calls)}` },
      { key: 'share', label: 'Share of time', num: true, html: (r) => percent(r.share) },
      { key: 'p50_ns', label: 'p50', num: true, html: (r) => duration(r.p50_ns) },
      { key: 'p99_ns', label: 'p99', num: true, html: (r) => duration(r.p99_ns) },
      { key: 'total_ns', label: 'Total', num: true, html: (r) => duration(r.total_ns) },
    ],
  });
  const nccl = new Table(root.querySelector('#nccl'), {
    id: 'nccl',
    sort: { key: 'comm_id', dir: 1 },
    empty: 'No NCCL communicator of this process.',
    columns: [
      { key: 'comm_id', label: 'Communicator', html: (r) => `<code>${esc(r.comm_id)}</code>` },
      { key: 'rank', label: 'Rank', num: true, html: (r) => `${r.rank ?? '–'}/${r.nranks ?? '–'}` },
      { key: 'calls', label: 'Calls', num: true, html: (r) => count(r.calls) },
      { key: 'busbw', label: 'Bus bw', num: true, html: (r) => (r.busbw == null ? '–' : `${bytes(r.busbw)}/s`) },
      { key: 'skew_p50_ns', label: 'Skew p50', num: true, html: (r) => duration(r.skew_p50_ns) },
      { key: 'skew_p99_ns', label: 'Skew p99', num: true, html: (r) => duration(r.skew_p99_ns) },
      { key: 'straggler', label: 'Straggler', html: (r) => (r.straggler == null ? '–' : `rank ${r.straggler}`) },
    ],
  });

  const button = root.querySelector('#capture');
  const status = root.querySelector('#capture-status');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = `Recording ${CAPTURE_SECONDS} s…`;
    try {
      const r = await postJSON('/api/v1/capture', { pid: Number(pid), seconds: CAPTURE_SECONDS });
      const blob = await r.blob();
      const name = `eacgm-${pid}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
      saveFile(new Blob([blob], { type: 'application/json' }), name);
      status.textContent = `Saved ${name} (${bytes(blob.size)}): open it in Perfetto or chrome://tracing.`;
      status.dataset.saved = name;
    } catch (e) {
      status.textContent = e instanceof ApiError ? `Capture failed: ${e.message}` : `Capture failed: ${e}`;
    } finally {
      button.disabled = false;
    }
  });

  const feeds = new Feeds();
  let doc = null; // /api/v1/process
  let facts = null; // its row of /api/v1/processes
  let shapes = new Map(); // kernel name -> launch shapes
  let memRows = null; // its rows of /api/v1/memory
  let flameComm = ''; // a Python process without traced calls is named by its stacks

  function drawTitle() {
    const comm = processName(facts?.comm || doc?.comm, facts?.cmdline) || flameComm || '?';
    root.querySelector('#proc-title').textContent = `${comm} (${pid})`;
    const bits = [];
    if (facts?.cmdline) bits.push(`<code>${esc(facts.cmdline)}</code>`);
    if (facts?.rank != null) bits.push(`rank ${facts.rank}${facts.world_size != null ? ` of ${facts.world_size}` : ''}`);
    if (facts?.pod) bits.push(`pod <b>${esc(facts.namespace)}/${esc(facts.pod)}</b>${facts.container ? ` container ${esc(facts.container)}` : ''}`);
    else if (facts?.pod_uid) bits.push(`pod <code title="pod UID">${esc(facts.pod_uid)}</code>`);
    if (facts?.container_id) bits.push(`container id <code title="${esc(facts.container_id)}">${esc(facts.container_id.slice(0, 12))}</code>`);
    if (facts?.job) bits.push(`job ${esc(facts.job)}${facts.job_step != null ? `.${esc(facts.job_step)}` : ''}`);
    if (facts?.pod_gpus?.length) bits.push(`given ${facts.pod_gpus.map(esc).join(', ')}`);
    if (facts?.exited) bits.push('<span class="tag">exited</span>');
    if (doc?.overhead) bits.push(`probe overhead ${percent(doc.overhead.cpu_share, 2)} of its CPU time`);
    root.querySelector('#proc-facts').innerHTML = bits.join(' · ');
  }

  function drawKernels() {
    if (!doc) return;
    kernels.setRows(
      doc.work.map((w) => ({
        ...w,
        shapes: (shapes.get(w.name) ?? [])
          .slice(0, 3)
          .map((s) => `<code>${s.grid.join('×')} × ${s.block.join('×')}</code>`)
          .join(' '),
      })),
    );
  }

  // The ledger's failed allocations beside the allocation functions' errors: two counts
  // of failures, each said for what it counts.
  function drawMemoryNote() {
    const note = root.querySelector('#memory-failed');
    const failed = (memRows ?? []).reduce((s, m) => s + (m.failed_allocations ?? m.failed ?? 0), 0);
    note.hidden = failed === 0;
    // The ledger's own split per function, summed over the devices, when the agent sends it.
    const byFunction = {};
    for (const m of memRows ?? []) for (const [f, n] of Object.entries(m.failed_allocations_by_function ?? {})) byFunction[f] = (byFunction[f] ?? 0) + n;
    note.textContent = failed === 0 ? '' : failedAllocationsNote(failed, doc?.functions ?? [], byFunction);
  }

  // The process's functions, GPU work and host waits.
  feeds.add(new Feed(ctx, {
    name: 'process',
    box: [root.querySelector('#functions'), root.querySelector('#kernels'), root.querySelector('#waits')],
    load: ({ signal }) => getJSON(`/api/v1/process?pid=${pid}`, { signal }),
    draw(d) {
      doc = d;
      drawTitle();
      functions.setRows(doc.functions);
      drawKernels();
      waits.setRows(doc.waits?.waits ?? []);
      drawMemoryNote();
    },
  }));
  // Its command line, rank, pod, job: read less often.
  feeds.add(new Feed(ctx, {
    name: 'facts',
    status: root.querySelector('#proc-state'),
    every: 5,
    load: ({ signal }) => getOptional('/api/v1/processes', { processes: [] }, { signal }),
    draw(procs) {
      facts = procs.processes.find((p) => p.pid === Number(pid)) ?? null;
      drawTitle();
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'shapes',
    status: root.querySelector('#kernels-state'),
    every: 5,
    load: ({ signal }) => getOptional('/api/v1/kernels', { kernels: [] }, { signal }),
    draw(kernelDoc) {
      shapes = new Map(kernelDoc.kernels.map((k) => [k.name, k.shapes]));
      drawKernels();
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'memory',
    box: [root.querySelector('#memory'), root.querySelector('#leaks')],
    load: ({ signal }) => getOptional('/api/v1/memory', { processes: [] }, { signal }),
    draw(memDoc) {
      memRows = memDoc.processes.filter((m) => m.pid === Number(pid));
      memory.setRows(memRows.map((m) => ({ device: m.device, live_bytes: m.live_bytes, peak_bytes: m.peak_bytes, allocations: m.allocations, frees: m.frees, failed: m.failed_allocations ?? m.failed ?? 0 })));
      leaks.setRows(memRows.flatMap((m) => (m.leaks?.largest ?? []).map((l) => ({ ...l }))));
      drawMemoryNote();
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'nccl',
    box: root.querySelector('#nccl'),
    load: ({ signal }) => getOptional('/api/v1/nccl', { collectives: [], communicators: [] }, { signal }),
    draw(ncclDoc) {
      const comms = ncclDoc.communicators.filter((c) => c.ranks.some((r) => r.pid === Number(pid)));
      nccl.setRows(
        comms.map((c) => {
          const me = c.ranks.find((r) => r.pid === Number(pid));
          const coll = ncclDoc.collectives.filter((k) => k.comm_id === c.comm_id);
          const straggler = c.ranks.find((r) => r.straggler);
          return {
            comm_id: c.comm_id,
            rank: me?.rank,
            nranks: c.nranks,
            calls: coll.reduce((s, k) => s + k.calls, 0),
            busbw: coll.length ? Math.max(...coll.map((k) => k.busbw_bytes_per_s ?? 0)) : null,
            skew_p50_ns: c.skew_p50_ns,
            skew_p99_ns: c.skew_p99_ns,
            straggler: straggler ? straggler.rank : null,
          };
        }),
      );
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'flame',
    box: root.querySelector('#flame'),
    every: 5,
    load: ({ signal }) => getText(`/api/v1/python/folded?pid=${pid}`, { signal }),
    async draw(text) {
      const first = text.slice(0, text.indexOf(';'));
      if (first.endsWith(`(${pid})`)) {
        flameComm = first.slice(0, first.lastIndexOf(' ('));
        drawTitle();
      }
      const box = root.querySelector('#flame');
      const samples = await drawFlame(box, text, `pid ${pid}`);
      root.querySelector('#flame-note').textContent = samples ? `${samples} samples in the window` : '';
      if (!samples) box.innerHTML = '<p class="muted">No Python samples for this process (not a Python program, or sampling is off).</p>';
    },
  }));

  return { refresh: () => feeds.poll(), rangeChanged() {}, retheme() {}, unmount: () => feeds.stop() };
}

// What the memory ledger's "Failed allocs" counts, and the allocation functions' own
// errors in the Functions table beside it.
// byFunction: the ledger's own split ({function: failed calls}), empty from an agent that
// does not send it.
export function failedAllocationsNote(failed, functions, byFunction = {}) {
  const errs = functions.filter((f) => ALLOCATION_FUNCTIONS.has(f.function) && f.errors > 0).sort((a, b) => b.errors - a.errors);
  const listed = errs.map((f) => `${f.function} ${count(f.errors)}`).join(', ');
  const split = Object.entries(byFunction).sort((a, b) => b[1] - a[1]).map(([f, n]) => `${f} ${count(n)}`).join(', ');
  return (
    `Failed allocs: ${count(failed)} allocation calls that returned an error, of every allocation function ` +
    '(cudaMalloc, cudaMallocAsync, cudaMallocManaged, cudaMallocHost, cudaMallocPitch, and the driver\'s cuMemAlloc* ' +
    'when called directly: one inside a runtime call is counted once, as the runtime call)' +
    (split ? `: ${split}. ` : '. ') +
    (listed ? `The Functions table counts each function's failed calls: ${listed}.` : 'The Functions table has no error of an allocation function yet.')
  );
}

// The functions the memory ledger reads as allocations (src/analysis/memory_ledger.cpp).
const ALLOCATION_FUNCTIONS = new Set([
  'cudaMalloc', 'cuMemAlloc_v2', 'cudaMallocAsync', 'cudaMallocFromPoolAsync', 'cuMemAllocAsync', 'cuMemAllocFromPoolAsync',
  'cudaMallocManaged', 'cuMemAllocManaged', 'cudaMallocHost', 'cudaHostAlloc', 'cuMemAllocHost_v2', 'cuMemHostAlloc',
  'cudaMallocPitch', 'cuMemAllocPitch_v2', 'cuMemCreate',
]);

// A function's errors; of a function counted in the kernel, its timed calls' only (the
// others' return values are not read), said so.
function functionErrors(r) {
  const n = r.errors ? `<span class="bad">${count(r.errors)}</span>` : '0';
  return r.timed != null && r.timed < r.calls ? `${n} <span class="muted small">of ${count(r.timed)} timed</span>` : n;
}
