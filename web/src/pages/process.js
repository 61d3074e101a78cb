// One process: its functions (p50/p99), GPU work and kernel shapes, memory ledger and
// leaks, host waits, NCCL communicators and skew, Python hot spots, and a Capture
// button that saves a 5-second Perfetto trace.
import { ApiError, getJSON, getOptional, getText, postJSON } from '../api.js';
import { saveFile } from '../download.js';
import { drawFlame } from '../flame.js';
import { bytes, count, duration, esc, percent, processName } from '../format.js';
import { Table } from '../table.js';

export const CAPTURE_SECONDS = 5;

export function processPage(root, ctx, pid) {
  root.innerHTML = `
    <section class="card head"><h2 id="proc-title">Process ${pid}</h2><p id="proc-facts" class="muted"></p>
      <div class="actions"><button id="capture" type="button" title="record every traced call of this process for ${CAPTURE_SECONDS} s and save it as a Perfetto trace">Capture ${CAPTURE_SECONDS} s</button>
      <span id="capture-status" class="muted small" role="status"></span></div></section>
    <section class="card"><h2>Functions</h2><div id="functions"></div></section>
    <div class="two">
      <section class="card"><h2>Kernels</h2><div id="kernels"></div></section>
      <section class="card"><h2>Memory</h2><div id="memory"></div><h3>Leaks</h3><div id="leaks"></div></section>
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
      { key: 'errors', label: 'Errors', num: true, html: (r) => (r.errors ? `<span class="bad">${count(r.errors)}</span>` : '0') },
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
      { key: 'failed', label: 'Failed', num: true, html: (r) => count(r.failed) },
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

  let flameDrawn = -1;
  let flameComm = ''; // a Python process without traced calls is named by its stacks
  let flameBusy = false;

  async function refreshFlame() {
    if (flameBusy || (flameDrawn >= 0 && ctx.ticks % 5 !== 0)) return;
    flameBusy = true;
    try {
      const text = await getText(`/api/v1/python/folded?pid=${pid}`);
      const first = text.slice(0, text.indexOf(';'));
      if (first.endsWith(`(${pid})`)) flameComm = first.slice(0, first.lastIndexOf(' ('));
      const box = root.querySelector('#flame');
      const samples = await drawFlame(box, text, `pid ${pid}`);
      flameDrawn = samples;
      root.querySelector('#flame-note').textContent = samples ? `${samples} samples in the window` : '';
      if (!samples) box.innerHTML = '<p class="muted">No Python samples for this process (not a Python program, or sampling is off).</p>';
    } finally {
      flameBusy = false;
    }
  }

  async function refresh() {
    const [doc, kernelDoc, memDoc, ncclDoc, procs] = await Promise.all([
      getJSON(`/api/v1/process?pid=${pid}`),
      getOptional('/api/v1/kernels', { kernels: [] }),
      getOptional('/api/v1/memory', { processes: [] }),
      getOptional('/api/v1/nccl', { collectives: [], communicators: [] }),
      getOptional('/api/v1/processes', { processes: [] }),
    ]);
    const facts = procs.processes.find((p) => p.pid === Number(pid));
    const comm = processName(facts?.comm || doc.comm, facts?.cmdline) || flameComm || '?';
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
    if (doc.overhead) bits.push(`probe overhead ${percent(doc.overhead.cpu_share, 2)} of its CPU time`);
    root.querySelector('#proc-facts').innerHTML = bits.join(' · ');

    functions.setRows(doc.functions);
    const shapes = new Map(kernelDoc.kernels.map((k) => [k.name, k.shapes]));
    kernels.setRows(
      doc.work.map((w) => ({
        ...w,
        shapes: (shapes.get(w.name) ?? [])
          .slice(0, 3)
          .map((s) => `<code>${s.grid.join('×')} × ${s.block.join('×')}</code>`)
          .join(' '),
      })),
    );
    const mine = memDoc.processes.filter((m) => m.pid === Number(pid));
    memory.setRows(mine.map((m) => ({ device: m.device, live_bytes: m.live_bytes, peak_bytes: m.peak_bytes, allocations: m.allocations, frees: m.frees, failed: m.failed_allocations ?? m.failed ?? 0 })));
    leaks.setRows(mine.flatMap((m) => (m.leaks?.largest ?? []).map((l) => ({ ...l }))));
    waits.setRows(doc.waits?.waits ?? []);
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
    await refreshFlame();
  }

  return { refresh, rangeChanged() {}, retheme() {}, unmount() {} };
}
