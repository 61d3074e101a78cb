// The job's NCCL hang verdict across nodes (/api/v1/inflight's `job`, docs/report.md "The
// job's verdict on every agent"): per hung communicator the agent's sentence, the missing
// ranks and their nodes, the waiting ranks compressed with their nodes and how long, and
// the ranks' Python stacks, read by each rank's own node's agent (?stacks=1), ranks with
// one stack shown once; the nodes whose agents did not answer, with why.
import { getOptional } from './api.js';
import { age, Feed } from './feed.js';
import { clock, esc } from './format.js';

// Asked with the stacks at most this often (the agent reuses another node's answer for
// 5 s): every second poll of a page that wakes every 3 s.
export const VERDICT_EVERY = 2;
// An ended hang is listed this long after its end.
export const ENDED_KEEP_NS = 10 * 60 * 1e9;
// At most this many stack groups per communicator (a rank's own stack each at worst).
export const MAX_GROUPS = 32;

// Rank numbers as the agent writes them: sorted, each once, runs of three or more as
// "a-b" ("0-8,10,11").
export function rankList(numbers) {
  const sorted = [...new Set(numbers)].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j += 1;
    if (j - i >= 2) out.push(`${sorted[i]}-${sorted[j]}`);
    else out.push(...sorted.slice(i, j + 1));
    i = j + 1;
  }
  return out.join(',');
}

const nodeName = (r) => r.node || '(unnamed)';

// Ranks as the agent's verdict says the waiting side: "rank 9 on node b", "ranks
// 0-8,10-15 on nodes a,b,c,d" (nodes in name order).
export function ranksOnNodes(ranks) {
  if (!ranks?.length) return '';
  const numbers = new Set(ranks.map((r) => r.rank));
  const nodes = [...new Set(ranks.map(nodeName))].sort();
  return `${numbers.size === 1 ? 'rank' : 'ranks'} ${rankList(numbers)} on ${nodes.length === 1 ? 'node' : 'nodes'} ${nodes.join(',')}`;
}

// Ranks node by node, as the verdict says the missing side: "rank 9 on node b", "ranks
// 2,3 on node b, rank 7 on node c".
export function ranksByNode(ranks) {
  const byNode = new Map();
  for (const r of ranks ?? []) {
    if (!byNode.has(nodeName(r))) byNode.set(nodeName(r), []);
    byNode.get(nodeName(r)).push(r);
  }
  return [...byNode.keys()].sort().map((n) => ranksOnNodes(byNode.get(n))).join(', ');
}

// The ranks sharing one Python stack (or one reason for none), missing ranks first, each
// kind in rank order; at most `max` groups, the rest counted.
export function stackGroups(comm, max = MAX_GROUPS) {
  const groups = [];
  const byKey = new Map();
  for (const [kind, list] of [['missing', comm.missing ?? []], ['waiting', comm.in ?? []]]) {
    for (const r of [...list].sort((a, b) => a.rank - b.rank)) {
      if (!('python_stack' in r)) continue; // asked without stacks
      const stack = r.python_stack ?? null;
      const key = `${kind}\n${stack ? JSON.stringify(stack) : `!${r.stack_error ?? ''}`}`;
      let g = byKey.get(key);
      if (!g) {
        g = { kind, stack, error: stack ? null : (r.stack_error ?? 'no stack'), call: r.stack_call ?? null, ranks: [] };
        byKey.set(key, g);
        groups.push(g);
      }
      g.ranks.push(r);
    }
  }
  return { groups: groups.slice(0, max), left_out: Math.max(0, groups.length - max) };
}

// What the section shows of a verdict document (`job`, or null from an agent without the
// route): {state: 'none'|'no-store'|'quiet'|'hang', hangs, ended, unanswered, note}.
// `keep(comm)` selects communicators (the job page's); `nowNs` ages the ended ones.
export function verdictView(job, { nowNs, keep = () => true } = {}) {
  if (!job) return { state: 'none', hangs: [], ended: [], unanswered: [], note: 'This agent does not give the job\'s verdict across nodes.' };
  if (!job.store) {
    return { state: 'no-store', hangs: [], ended: [], unanswered: [], note: 'This agent has no store ([store] url): it cannot see the ranks of other nodes, so it gives no verdict across nodes.' };
  }
  const hangs = (job.communicators ?? []).filter((c) => c.hang && keep(c));
  const ended = (job.ended ?? []).filter((c) => c.end_ns != null && nowNs - c.end_ns < ENDED_KEEP_NS && keep(c)).reverse();
  const unanswered = (job.stacks ?? []).filter((s) => s.error);
  const others = job.other_ranks ? `, with ${job.other_ranks} ranks of other nodes read ${age((job.read_age_ns ?? 0) / 1e6)} ago` : '';
  const note = hangs.length ? '' : `No hang across nodes (node ${job.node}${others}).`;
  return { state: hangs.length ? 'hang' : 'quiet', hangs, ended, unanswered, note };
}

function stackHtml(g, key) {
  const who = `${ranksOnNodes(g.ranks)}${g.ranks.length === 1 ? ` (pid ${g.ranks[0].pid})` : ''}`;
  const where = g.kind === 'missing' ? 'missing, in' : 'waiting, in';
  const call = g.call ? ` <span class="muted">${where}</span> <code>${esc(g.call)}</code>` : '';
  const body = g.stack
    ? `<ol class="py-stack">${g.stack.map((f) => `<li><code>${esc(f)}</code></li>`).join('')}</ol>`
    : `<p class="bad small stack-error">${esc(g.error)}</p>`;
  return `<details class="rank-stack${g.kind === 'missing' ? ' missing' : ''}" data-key="${esc(key)}" data-kind="${g.kind}"><summary>${esc(who)}${call}${g.stack ? '' : ' <span class="muted small">no stack</span>'}</summary>${body}</details>`;
}

// One hung communicator.
export function hangHtml(c) {
  const call = c.name ? `${c.name} #${c.instance}` : `collective #${c.instance}`;
  const facts = [];
  if (c.missing?.length) facts.push(['Missing', `<span class="bad">${esc(ranksByNode(c.missing))}</span> <span class="muted">never entered ${esc(call)}</span>`]);
  if (c.unreported?.length) facts.push(['Unreported', `<span class="bad">ranks ${esc(rankList(c.unreported))}</span> <span class="muted">reported by no agent</span>`]);
  if (c.in?.length) facts.push(['Waiting', `${esc(ranksOnNodes(c.in))} in ${esc(call)} for ${esc(age((c.age_ns ?? 0) / 1e6))}`]);
  facts.push(['Communicator', `<code>${esc(c.comm_id)}</code>, ${c.nranks} ranks on ${esc((c.nodes ?? []).join(', ') || '–')}, since ${esc(clock(c.start_ns))}`]);
  const { groups, left_out: leftOut } = stackGroups(c);
  const stacks = groups.length
    ? `<h3>Python stacks <span class="muted small">read by each rank's node, innermost frame first</span></h3>${groups.map((g) => stackHtml(g, `${c.comm_id}/${c.instance}/${g.kind}/${g.ranks[0].rank}`)).join('')}${leftOut ? `<p class="muted small">${leftOut} more stacks not listed</p>` : ''}`
    : '';
  return `<div class="hang" data-comm="${esc(c.comm_id)}"><p class="verdict bad">${esc(c.verdict)}</p>
    <dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd data-fact="${esc(k.toLowerCase())}">${v}</dd>`).join('')}</dl>${stacks}</div>`;
}

// An ended hang, briefly.
export function endedHtml(c) {
  return `<li data-comm="${esc(c.comm_id)}"><span class="tag">over</span> ${esc(c.verdict)} <span class="muted">(${esc(clock(c.start_ns))} to ${esc(clock(c.end_ns))}, lasted ${esc(age((c.end_ns - c.start_ns) / 1e6))})</span></li>`;
}

export function viewHtml(view) {
  const parts = [];
  if (view.note) parts.push(`<p class="plain${view.state === 'quiet' ? ' muted' : ''}" id="hangs-note">${esc(view.note)}</p>`);
  parts.push(...view.hangs.map(hangHtml));
  if (view.unanswered.length) {
    parts.push(`<h3>Nodes that did not answer for their ranks' stacks</h3><ul class="plain small unanswered">${view.unanswered.map((s) => `<li class="bad" data-node="${esc(s.node)}">${esc(s.error)}</li>`).join('')}</ul>`);
  }
  if (view.ended.length) parts.push(`<h3>Ended in the last ${ENDED_KEEP_NS / 60e9} minutes</h3><ul class="plain small ended">${view.ended.map(endedHtml).join('')}</ul>`);
  return parts.join('');
}

// The section's feed: draws into `box` (inside a card whose h2 gets the status line);
// `show(view)` hides or shows the card. A rank's stack opened stays open across updates.
export function verdictFeed(ctx, { box, keep, show = () => {} }) {
  return new Feed(ctx, {
    name: 'job-verdict',
    box,
    every: VERDICT_EVERY,
    load: async ({ signal }) => {
      const doc = await getOptional('/api/v1/inflight?stacks=1', null, { signal });
      return { job: doc?.job ?? null, keep: typeof keep === 'function' ? keep() : null };
    },
    draw({ job, keep: k }) {
      const view = verdictView(job, { nowNs: Date.now() * 1e6, keep: k ?? undefined });
      const open = new Set([...box.querySelectorAll('details[open]')].map((d) => d.dataset.key));
      box.dataset.verdict = view.state;
      box.innerHTML = viewHtml(view);
      for (const d of box.querySelectorAll('details')) if (open.has(d.dataset.key)) d.open = true;
      show(view);
    },
  });
}
