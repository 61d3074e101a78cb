// The job's verdict across nodes as the pages show it: ranks compressed with their nodes
// as the agent words them, the ranks grouped by stack, and what is shown with no hang,
// no store or an agent without the verdict.
import { describe, expect, it } from 'vitest';
import { ENDED_KEEP_NS, hangHtml, MAX_GROUPS, rankList, ranksByNode, ranksOnNodes, stackGroups, verdictView, viewHtml } from '../src/job_verdict.js';

const S = 1e9;
const rank = (r, node, extra = {}) => ({ node, rank: r, pid: 100 + r, entered: 7, finished: 6, waiting_ns: 94 * S, collective: 'ncclAllReduce', report_age_ns: 0, ...extra });
const STACK = ['[nccl] ncclAllReduce', 'step (train.py:9)'];

describe('ranks', () => {
  it('writes rank numbers as the agent does: runs of three or more as a range', () => {
    expect(rankList([15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14])).toBe('0-8,10-15');
    expect(rankList([0, 1, 3, 5, 6, 7, 7])).toBe('0,1,3,5-7');
    expect(rankList([])).toBe('');
  });

  it('compresses runs of ranks and names the nodes as the verdict does', () => {
    const waiting = [...Array.from({ length: 9 }, (_, i) => rank(i, ['a', 'b'][i % 2])), ...[10, 11, 12, 13, 14, 15].map((r) => rank(r, r < 13 ? 'd' : 'c'))];
    expect(ranksOnNodes(waiting)).toBe('ranks 0-8,10-15 on nodes a,b,c,d');
    expect(ranksOnNodes([rank(9, 'b')])).toBe('rank 9 on node b');
    expect(ranksOnNodes([rank(3, 'b'), rank(1, 'b'), rank(3, 'b')])).toBe('ranks 1,3 on node b');
    expect(ranksOnNodes([])).toBe('');
    expect(ranksOnNodes([rank(0, '')])).toBe('rank 0 on node (unnamed)');
  });

  it('says the missing ranks node by node', () => {
    expect(ranksByNode([rank(7, 'c'), rank(3, 'b'), rank(2, 'b')])).toBe('ranks 2,3 on node b, rank 7 on node c');
    expect(ranksByNode([rank(9, 'b')])).toBe('rank 9 on node b');
  });
});

describe('stack groups', () => {
  it('shows the missing ranks first, one group per stack or reason, in rank order', () => {
    const comm = {
      missing: [rank(5, 'b', { python_stack: ['[cuda] cudaStreamSynchronize'], stack_call: 'cudaStreamSynchronize' })],
      in: [
        rank(4, 'b', { python_stack: STACK, stack_call: 'ncclAllReduce' }),
        rank(0, 'a', { python_stack: STACK, stack_call: 'ncclAllReduce' }),
        rank(8, 'c', { python_stack: null, stack_error: 'node c did not answer' }),
        rank(9, 'c', { python_stack: null, stack_error: 'node c did not answer' }),
      ],
    };
    const { groups, left_out: leftOut } = stackGroups(comm);
    expect(leftOut).toBe(0);
    expect(groups.map((g) => [g.kind, g.ranks.map((r) => r.rank), g.call, g.error])).toEqual([
      ['missing', [5], 'cudaStreamSynchronize', null],
      ['waiting', [0, 4], 'ncclAllReduce', null],
      ['waiting', [8, 9], null, 'node c did not answer'],
    ]);
  });

  it('has none when the verdict came without stacks, and caps the groups', () => {
    expect(stackGroups({ missing: [rank(1, 'a')], in: [rank(0, 'a')] }).groups).toEqual([]);
    const many = { missing: [], in: Array.from({ length: MAX_GROUPS + 5 }, (_, i) => rank(i, 'a', { python_stack: [`f${i} (x.py:1)`] })) };
    const { groups, left_out: leftOut } = stackGroups(many);
    expect(groups).toHaveLength(MAX_GROUPS);
    expect(leftOut).toBe(5);
  });
});

describe('the verdict view', () => {
  const now = 1_000_000 * S;
  const hang = { comm_id: '0x1', nranks: 3, name: 'ncclAllReduce', instance: 18204, age_ns: 94 * S, in: [rank(0, 'a'), rank(1, 'b')], missing: [rank(2, 'b')], unreported: [], nodes: ['a', 'b'], hang: true, start_ns: now - 89 * S, end_ns: null, verdict: 'rank 2 on node b never entered ncclAllReduce #18204; ranks 0,1 on nodes a,b waiting for 94 s' };
  const job = { store: true, node: 'a', read_age_ns: 2e8, other_ranks: 1, communicators: [hang], ended: [], hang_total: 1 };

  it('is a note for an agent without the route or without a store', () => {
    expect(verdictView(null, { nowNs: now })).toMatchObject({ state: 'none', hangs: [] });
    const v = verdictView({ store: false, node: '', communicators: [], ended: [] }, { nowNs: now });
    expect(v.state).toBe('no-store');
    expect(v.note).toMatch(/^This agent has no store/);
  });

  it('is a quiet line without a hang: a long wait with no rank missing is not one', () => {
    const v = verdictView({ ...job, communicators: [{ ...hang, hang: false, missing: [] }] }, { nowNs: now });
    expect(v).toMatchObject({ state: 'quiet', hangs: [] });
    expect(v.note).toBe('No hang across nodes (node a, with 1 ranks of other nodes read 0 s ago).');
    expect(viewHtml(v)).not.toMatch(/class="[^"]*bad/);
  });

  it('lists the hangs, the nodes that did not answer, and the hangs ended lately, newest first', () => {
    const ended = (endS, id) => ({ ...hang, comm_id: id, end_ns: now - endS * S });
    const v = verdictView({ ...job, ended: [ended(ENDED_KEEP_NS / S + 1, 'old'), ended(120, 'x'), ended(30, 'y')], stacks: [{ node: 'b', error: null }, { node: 'c', error: 'c did not answer' }] }, { nowNs: now });
    expect(v.state).toBe('hang');
    expect(v.hangs).toEqual([hang]);
    expect(v.ended.map((c) => c.comm_id)).toEqual(['y', 'x']);
    expect(v.unanswered.map((s) => s.node)).toEqual(['c']);
    expect(verdictView(job, { nowNs: now, keep: () => false }).state).toBe('quiet');
  });

  it('writes the missing ranks highlighted, the waiting ranks compressed, and escapes what the agent sent', () => {
    const html = hangHtml({ ...hang, verdict: '<b>x</b>', unreported: [5, 4, 6] });
    expect(html).toContain('<dd data-fact="missing"><span class="bad">rank 2 on node b</span> <span class="muted">never entered ncclAllReduce #18204</span>');
    expect(html).toContain('<dd data-fact="waiting">ranks 0,1 on nodes a,b in ncclAllReduce #18204 for 94 s</dd>');
    expect(html).toContain('ranks 4-6</span> <span class="muted">reported by no agent');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(html).not.toContain('Python stacks');
  });
});
