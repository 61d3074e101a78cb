// The fleet: the NCCL hangs across nodes now (job_verdict.js), the jobs holding GPUs idle over the last day (the job report), the jobs of
// the history store's window across every node that writes to it (one row per job, its
// nodes and ranks, the ranks never seen, a link to its page), and the nodes with their
// processes. With a shared PostgreSQL store every agent's page shows the whole fleet;
// with a node's own SQLite store, that node. Both lists come summed by the agent, asked
// about as often as the store takes an interval.
import { getOptional } from '../api.js';
import { Feed, Feeds } from '../feed.js';
import { count, esc, gpuHours, money, percent, stretch } from '../format.js';
import { DEFAULT_WINDOW, idleRows, jobHref, ranges, reportPath } from '../job_report.js';
import { Table } from '../table.js';
import { verdictFeed } from '../job_verdict.js';

// The store takes an interval every 10 s: asked about that often (the page wakes every 3 s).
const HISTORY_EVERY = 3;
// The job report sums a day of the store's rows: asked about every 30 s.
const REPORT_EVERY = 10;

// The store's window for the range picker ("live" is the last 15 minutes).
function since(range) {
  return range === 'live' ? '15m' : range;
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
    <section class="card hangs-card" id="hangs-card"><h2>Hangs across nodes</h2><div id="hangs"></div></section>
    <section class="card"><h2>Idle GPUs <span id="idle-note" class="muted small"></span></h2><div id="idle"></div></section>
    <section class="card"><h2>Jobs <span id="jobs-note" class="muted small"></span></h2><div id="jobs"></div></section>
    <section class="card"><h2>Nodes <span id="nodes-note" class="muted small"></span></h2><div id="nodes"></div></section>`;
  const jobs = new Table(root.querySelector('#jobs'), {
    id: 'jobs',
    filterFields: ['job', 'nodes_text', 'pods_text'],
    filterLabel: 'Filter jobs (job, node, pod)',
    sort: { key: 'calls', dir: -1 },
    empty: 'No process of a batch job (SLURM_JOB_ID, torchrun) in this window.',
    columns: [
      { key: 'job', label: 'Job', html: (r) => `<a href="${esc(jobHref(r.job))}"><code>${esc(r.job)}</code></a>` },
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
  let currency = '';
  const idle = new Table(root.querySelector('#idle'), {
    id: 'idle-gpus',
    limit: 100,
    // Rows come most idle cost first; equal costs (no price) keep that order.
    sort: { key: 'idle_cost', dir: -1 },
    empty: 'No job or pod held a GPU idle in the last 24 hours.',
    filterFields: ['job', 'nodes_text'],
    filterLabel: 'Filter (job, pod, node)',
    columns: [
      { key: 'job', label: 'Job / pod', html: (r) => `<a href="${esc(r.href)}"><code>${esc(r.job)}</code></a>` },
      { key: 'node_count', label: 'Nodes', num: true, html: (r) => `<span title="${esc(r.nodes_text)}">${r.node_count}</span>` },
      { key: 'gpus', label: 'GPUs', num: true },
      { key: 'idle_gpu_hours', label: 'Idle GPU-hours', num: true, title: 'held (a process of the job had a context on the GPU) while its activity was under the idle threshold', html: (r) => gpuHours(r.idle_gpu_hours) },
      { key: 'idle_share', label: 'Idle share', num: true, title: 'of the GPU-hours held', html: (r) => percent(r.idle_share) },
      { key: 'longest_idle_s', label: 'Longest idle', num: true, html: (r) => stretch(r.longest_idle_s) },
      { key: 'idle_cost', label: 'Idle cost', num: true, html: (r) => money(r.idle_cost, currency) },
      { key: 'gpu_hours', label: 'GPU-hours held', num: true, html: (r) => gpuHours(r.gpu_hours) },
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
  // The job's verdict across nodes, live whatever the range picker says: a quiet line
  // when no communicator hangs.
  feeds.add(verdictFeed(ctx, { box: root.querySelector('#hangs') }));
  // Over the last day whatever the range picker says: the jobs to look at first.
  feeds.add(new Feed(ctx, {
    name: 'idle',
    box: root.querySelector('#idle'),
    every: REPORT_EVERY,
    load: ({ signal }) => getOptional(reportPath(DEFAULT_WINDOW), null, { signal }),
    draw(doc) {
      currency = doc?.currency ?? '';
      const rows = idleRows(doc);
      root.querySelector('#idle-note').textContent = doc
        ? `held but idle over the last ${DEFAULT_WINDOW}, every node of the store, most idle cost first${doc.gpu_hour_price > 0 ? '' : ' (no price set: most idle GPU-hours first)'}`
        : 'this agent keeps no history (serve --store)';
      idle.setRows(rows);
    },
  }));
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
        if (f.name === 'job-verdict') continue; // live, whatever the range
        f.reset();
        f.refetch();
      }
    },
    retheme() {},
    unmount: () => feeds.stop(),
  };
}
