// The job page's capture (POST /api/v1/capture/job) as the page says it: each node's
// outcome in one line, and the name of the file it saves.

// What became of each node's ranks in a job capture, one line per node.
export function captureOutcome(doc) {
  return (doc?.nodes ?? []).map((n) => {
    const missed = n.ranks.filter((r) => !r.captured);
    const who = (r) => (r.rank != null ? `rank ${r.rank}` : `pid ${r.pid}`);
    const head = `${n.node}: ${n.ranks.length - missed.length} of ${n.ranks.length} ranks captured`;
    return { node: n.node, ok: missed.length === 0, text: missed.length ? `${head}; ${missed.map((r) => `${who(r)} not: ${r.error}`).join('; ')}` : head };
  });
}

// A file name of the job's id: what a file system takes, the rest as '_'.
export function captureFileName(job, when = new Date()) {
  return `eacgm-job-${job.replace(/[^A-Za-z0-9._-]/g, '_')}-${when.toISOString().replace(/[:.]/g, '-')}.json`;
}
