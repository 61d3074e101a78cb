// One job (or a pod without a job) over a past window, from the job report (and, while
// one hangs, the NCCL hangs on its nodes now, job_verdict.js): the GPUs it
// held, how much of that time they computed or sat idle, energy and cost, where its time
// went when the agent says, and its nodes, ranks and pods from the fleet's job list.
import { ApiError, getOptional, postJSON } from '../api.js';
import { saveFile } from '../download.js';
import { Feed, Feeds } from '../feed.js';
import { captureFileName, captureOutcome } from '../job_capture.js';
import { bytes, count, esc } from '../format.js';
import { verdictFeed } from '../job_verdict.js';
import { activityBasis, jobHref, ranges, reportFigures, reportPath, sectionHtml, timeSections, WINDOWS } from '../job_report.js';

// The report is summed from the store's rows: asked again about every 30 s.
const REPORT_EVERY = 10;
// The job's capture: the same window on every node holding a rank (POST /api/v1/capture/job).
const CAPTURE_SECONDS = 5;

function tile(f) {
  return `<div class="tile${f.bad ? ' bad-tile' : ''}" data-key="${esc(f.key)}"><div class="label">${esc(f.label)}</div><div class="value">${esc(f.value)}</div><div class="muted small">${esc(f.note)}</div></div>`;
}

function when(ns) {
  return ns ? new Date(ns / 1e6).toLocaleString() : '–';
}

export function jobPage(root, ctx, job, initialWin) {
  let win = initialWin;
  root.innerHTML = `
    <section class="card head"><h2><span id="job-title">Job ${esc(job)}</span></h2>
      <div class="actions"><label>Window <select id="job-window" aria-label="report window">${WINDOWS.map((w) => `<option value="${w}"${w === win ? ' selected' : ''}>last ${w}</option>`).join('')}</select></label>
      <span id="job-facts" class="muted small"></span>
      <button id="job-capture" type="button" title="record every traced call of the job's ranks on every node for ${CAPTURE_SECONDS} s, merged into one Perfetto trace">Capture ${CAPTURE_SECONDS} s on every node</button>
      <span id="job-capture-status" class="muted small" role="status"></span></div>
      <ul id="job-capture-nodes" class="small plain" hidden></ul></section>
    <section class="card hangs-card" id="hangs-card" hidden><h2>Hangs on the job's nodes</h2><div id="hangs"></div>
      <p class="muted small legend">The communicators whose ranks all run on this job's nodes (the verdict names nodes and pids, not jobs).</p></section>
    <section class="card"><h2>GPUs</h2><div id="job-report"><p id="job-none" class="plain" hidden></p><div id="job-tiles" class="tiles"></div>
      <p id="job-legend" class="muted small legend"></p></div></section>
    <div id="job-time"></div>
    <section class="card"><h2>Processes and ranks</h2><div id="job-procs"><dl id="job-proc-facts" class="facts"></dl></div></section>`;

  const button = root.querySelector('#job-capture');
  const status = root.querySelector('#job-capture-status');
  const nodes = root.querySelector('#job-capture-nodes');
  const showNodes = (doc) => {
    const lines = captureOutcome(doc);
    nodes.hidden = lines.length === 0;
    nodes.innerHTML = lines.map((l) => `<li data-node="${esc(l.node)}" class="${l.ok ? '' : 'bad'}">${esc(l.text)}</li>`).join('');
  };
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = `Recording ${CAPTURE_SECONDS} s on every node of ${job}…`;
    delete status.dataset.saved;
    showNodes(null);
    try {
      const r = await postJSON('/api/v1/capture/job', { job, seconds: CAPTURE_SECONDS });
      const doc = await r.json();
      const blob = new Blob([JSON.stringify(doc.trace)], { type: 'application/json' });
      const name = captureFileName(job);
      saveFile(blob, name);
      showNodes(doc);
      status.textContent = `Saved ${name} (${bytes(blob.size)}): ${doc.captured} of ${doc.asked} ranks on ${count(doc.nodes.length)} nodes; open it in Perfetto.`;
      status.dataset.saved = name;
    } catch (e) {
      status.textContent = e instanceof ApiError ? `Capture failed: ${e.message}` : `Capture failed: ${e}`;
      if (e instanceof ApiError) showNodes(e.body);
    } finally {
      button.disabled = false;
    }
  });

  const feeds = new Feeds();
  // The job's nodes in the window (from the job list below): the hangs shown are those of
  // communicators on them only.
  let jobNodes = null;
  const hangsCard = root.querySelector('#hangs-card');
  const verdict = feeds.add(verdictFeed(ctx, {
    box: root.querySelector('#hangs'),
    keep: () => {
      const nodes = jobNodes;
      return nodes ? (c) => (c.nodes ?? []).length > 0 && c.nodes.every((n) => nodes.has(n)) : () => false;
    },
    show: (view) => {
      hangsCard.hidden = !view.hangs.length && !view.ended.length;
    },
  }));
  // The report answers by job first; a pod without a job is asked by pod.
  feeds.add(new Feed(ctx, {
    name: 'job-report',
    box: root.querySelector('#job-report'),
    every: REPORT_EVERY,
    async load({ signal }) {
      const byJob = await getOptional(reportPath(win, 'job', job), null, { signal });
      if (!byJob || byJob.jobs.length) return { doc: byJob, by: 'job' };
      const byPod = await getOptional(reportPath(win, 'pod', job), null, { signal });
      return byPod?.jobs.length ? { doc: byPod, by: 'pod' } : { doc: byJob, by: 'job' };
    },
    draw({ doc, by }) {
      const row = doc?.jobs?.find((r) => r.job === job) ?? doc?.jobs?.[0] ?? null;
      root.querySelector('#job-title').textContent = `${by === 'pod' ? 'Pod' : 'Job'} ${job}`;
      // A capture finds a batch job's ranks; a pod without a job has none to find.
      button.hidden = by === 'pod';
      const none = root.querySelector('#job-none');
      none.hidden = row != null;
      none.textContent = !doc ? 'This agent keeps no history (serve --store): there is no job report.' : `No GPU held by ${job} in the last ${win}.`;
      root.querySelector('#job-tiles').innerHTML = row ? reportFigures(row, doc).map(tile).join('') : '';
      root.querySelector('#job-facts').textContent = row
        ? `nodes ${row.nodes.join(', ')}, held ${when(row.first_ns)} to ${when(row.last_ns)}, from the ${doc.window.tier} rows`
        : '';
      root.querySelector('#job-legend').textContent = row
        ? `Activity: ${activityBasis(row.activity_basis)}. Idle: a held GPU's activity under ${Math.round(doc.idle_threshold * 100)}% (docs/job-report.md).`
        : '';
      root.querySelector('#job-time').innerHTML = row ? timeSections(row).map(sectionHtml).join('') : '';
    },
  }));
  // Its ranks, nodes and pods as the fleet page lists them (jobs only).
  feeds.add(new Feed(ctx, {
    name: 'job-procs',
    box: root.querySelector('#job-procs'),
    every: REPORT_EVERY,
    load: ({ signal }) => getOptional(`/api/v1/history/jobs?since=${encodeURIComponent(win)}&limit=10000`, null, { signal }),
    draw(doc) {
      const j = doc?.jobs?.find((r) => r.job === job);
      const known = jobNodes != null;
      jobNodes = j ? new Set(j.nodes) : null;
      if (!known && jobNodes) verdict.refetch(); // the hangs, now that the nodes are known
      const facts = j
        ? [
            ['Nodes', j.nodes.join(', ')],
            ['Ranks', `${ranges(j.ranks) || '–'}${j.world_size != null ? ` of ${j.world_size}` : ''}${j.missing_ranks?.length ? ` (missing ${ranges(j.missing_ranks)})` : ''}`],
            ['Pods', (j.pods ?? []).join(', ') || '–'],
            ['Processes', `${count(j.processes)}${j.running ? ` (${count(j.running)} running)` : ''}`],
            ['Calls', `${count(j.calls)}, ${count(j.errors)} errors`],
          ]
        : [['', doc ? `No process of a batch job named ${job} in the last ${win}.` : 'This agent keeps no history (serve --store).']];
      root.querySelector('#job-proc-facts').innerHTML = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('');
    },
  }));

  root.querySelector('#job-window').addEventListener('change', (e) => {
    win = e.target.value;
    // The address follows the window without loading the page again.
    history.replaceState(null, '', jobHref(job, win));
    for (const f of feeds.list) {
      if (f.name === 'job-verdict') continue; // live, whatever the window
      f.reset();
      f.refetch();
    }
  });

  return {
    refresh: () => feeds.poll(),
    rangeChanged() {}, // the page has its own window
    retheme() {},
    unmount: () => feeds.stop(),
  };
}
