// The fleet: the jobs of the history store's window across every node that writes to it
// (one row per job, its nodes and ranks, the ranks never seen), and the nodes with their
// processes. With a shared PostgreSQL store every agent's page shows the whole fleet;
// with a node's own SQLite store, that node.
import { getOptional } from '../api.js';
import { count, esc } from '../format.js';
import { Table } from '../table.js';

// The store's window for the range picker ("live" is the last 15 minutes).
function since(range) {
  return range === 'live' ? '15m' : range;
}

// "0-3,5": sorted ranks as ranges.
function ranges(ranks) {
  const out = [];
  for (let i = 0; i < ranks.length; ) {
    let j = i;
    while (j + 1 < ranks.length && ranks[j + 1] === ranks[j] + 1) j += 1;
    out.push(j === i ? `${ranks[i]}` : `${ranks[i]}-${ranks[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

function when(ns) {
  return ns == null ? '–' : new Date(ns / 1e6).toLocaleString();
}

export function fleetPage(root, ctx) {
  root.innerHTML = `
    <section class="card"><h2>Jobs <span id="jobs-note" class="muted small"></span></h2><div id="jobs"></div></section>
    <section class="card"><h2>Nodes</h2><div id="nodes"></div></section>`;
  const jobs = new Table(root.querySelector('#jobs'), {
    id: 'jobs',
    filterFields: ['job', 'nodes_text', 'pods_text'],
    filterLabel: 'Filter jobs (job, node, pod)',
    sort: { key: 'calls', dir: -1 },
    empty: 'No process of a batch job (SLURM_JOB_ID, torchrun) in this window.',
    columns: [
      { key: 'job', label: 'Job', html: (r) => `<code>${esc(r.job)}</code>` },
      { key: 'nodes', label: 'Nodes', num: true, html: (r) => `<span title="${esc(r.nodes_text)}">${r.nodes}</span>` },
      { key: 'ranks_text', label: 'Ranks', html: (r) => `${esc(r.ranks_text)}${r.missing ? ` <span class="bad" title="ranks below world_size never seen">missing ${esc(r.missing)}</span>` : ''}` },
      { key: 'pods_text', label: 'Pods', html: (r) => esc(r.pods_text || '–') },
      { key: 'processes', label: 'Processes', num: true, html: (r) => `${r.processes}${r.running ? ` (${r.running} running)` : ''}` },
      { key: 'calls', label: 'Calls', num: true, html: (r) => count(r.calls) },
      { key: 'errors', label: 'Errors', num: true, html: (r) => (r.errors ? `<span class="bad">${count(r.errors)}</span>` : '0') },
      { key: 'first_ns', label: 'First seen', num: true, html: (r) => when(r.first_ns) },
      { key: 'last_ns', label: 'Last seen', num: true, html: (r) => when(r.last_ns) },
    ],
  });
  const nodes = new Table(root.querySelector('#nodes'), {
    id: 'nodes',
    filterFields: ['node'],
    filterLabel: 'Filter nodes',
    sort: { key: 'calls', dir: -1 },
    empty: 'No node wrote to this store in this window.',
    columns: [
      { key: 'node', label: 'Node', html: (r) => `<code>${esc(r.node)}</code>` },
      { key: 'processes', label: 'Processes', num: true },
      { key: 'running', label: 'Running', num: true },
      { key: 'jobs', label: 'Jobs', num: true },
      { key: 'calls', label: 'Calls', num: true, html: (r) => count(r.calls) },
      { key: 'last_ns', label: 'Last seen', num: true, html: (r) => when(r.last_ns) },
    ],
  });

  async function refresh() {
    const q = `since=${encodeURIComponent(since(ctx.range()))}`;
    const [jobDoc, procDoc] = await Promise.all([
      getOptional(`/api/v1/history/jobs?${q}`, null),
      getOptional(`/api/v1/history/processes?${q}`, null),
    ]);
    root.querySelector('#jobs-note').textContent = jobDoc ? `over the last ${since(ctx.range())}, every node of the store` : 'this agent keeps no history (serve --store)';
    jobs.setRows(
      (jobDoc?.jobs ?? []).map((j) => ({
        ...j,
        nodes: j.nodes.length,
        nodes_text: j.nodes.join(', '),
        ranks_text: `${ranges(j.ranks)}${j.world_size != null ? ` of ${j.world_size}` : ''}`,
        missing: ranges(j.missing_ranks ?? []),
        pods_text: (j.pods ?? []).join(', '),
      })),
    );
    const byNode = new Map();
    for (const p of procDoc?.processes ?? []) {
      const n = byNode.get(p.node) ?? { node: p.node, processes: 0, running: 0, jobs: new Set(), calls: 0, last_ns: 0 };
      n.processes += 1;
      if (!p.exited) n.running += 1;
      if (p.job) n.jobs.add(p.job);
      n.calls += p.calls ?? 0;
      n.last_ns = Math.max(n.last_ns, p.last_ns ?? 0);
      byNode.set(p.node, n);
    }
    nodes.setRows([...byNode.values()].map((n) => ({ ...n, jobs: n.jobs.size })));
  }

  return {
    refresh,
    rangeChanged() {},
    retheme() {},
    unmount() {},
  };
}
