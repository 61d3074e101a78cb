// The fleet: the jobs of the history store's window across every node that writes to it
// (one row per job, its nodes and ranks, the ranks never seen), and the nodes with their
// processes. With a shared PostgreSQL store every agent's page shows the whole fleet;
// with a node's own SQLite store, that node. Both lists come summed by the agent, asked
// about as often as the store takes an interval.
import { getOptional } from '../api.js';
import { Feed, Feeds } from '../feed.js';
import { count, esc } from '../format.js';
import { Table } from '../table.js';

// The store takes an interval every 10 s: asked about that often (the page wakes every 3 s).
const HISTORY_EVERY = 3;

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

// A list comes a page at a time (its first page: the rows with most calls): how many
// of the window's rows it shows, when not all.
export function pageNote(shown, total) {
  return total != null && total > shown ? `the ${shown} with most calls of ${total}` : '';
}

function when(ns) {
  return ns == null ? '–' : new Date(ns / 1e6).toLocaleString();
}

export function fleetPage(root, ctx) {
  root.innerHTML = `
    <section class="card"><h2>Jobs <span id="jobs-note" class="muted small"></span></h2><div id="jobs"></div></section>
    <section class="card"><h2>Nodes <span id="nodes-note" class="muted small"></span></h2><div id="nodes"></div></section>`;
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

  const feeds = new Feeds();
  feeds.add(new Feed(ctx, {
    name: 'jobs',
    box: root.querySelector('#jobs'),
    every: HISTORY_EVERY,
    load: ({ signal }) => getOptional(`/api/v1/history/jobs?since=${encodeURIComponent(since(ctx.range()))}`, null, { signal }),
    draw(jobDoc) {
      const page = pageNote(jobDoc?.jobs?.length ?? 0, jobDoc?.total);
      root.querySelector('#jobs-note').textContent = jobDoc ? `over the last ${since(ctx.range())}, every node of the store${page ? `: ${page}` : ''}` : 'this agent keeps no history (serve --store)';
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
    },
  }));
  feeds.add(new Feed(ctx, {
    name: 'nodes',
    box: root.querySelector('#nodes'),
    every: HISTORY_EVERY,
    // Per node, summed by the agent: the page never reads the window's whole process list
    // (thousands of short processes on a busy node).
    load: ({ signal }) => getOptional(`/api/v1/history/nodes?since=${encodeURIComponent(since(ctx.range()))}`, null, { signal }),
    draw(nodeDoc) {
      root.querySelector('#nodes-note').textContent = pageNote(nodeDoc?.nodes?.length ?? 0, nodeDoc?.total);
      nodes.setRows(nodeDoc?.nodes ?? []);
    },
  }));

  return {
    refresh: () => feeds.poll(),
    rangeChanged() {
      for (const f of feeds.list) {
        f.reset();
        f.refetch();
      }
    },
    retheme() {},
    unmount: () => feeds.stop(),
  };
}
