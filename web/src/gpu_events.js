// The GPU health events' rows (/api/v1/gpu_events): an XID, ECC or remapped rows, a clock
// slowdown, PCIe replays or a GPU lost, each beside the processes on that GPU and the
// calls they were waiting in at that moment, so a fault is seen next to the work it hit.
import { duration, esc } from './format.js';

export const GPU_EVENTS_HELP =
  'What NVML reported changing between two sampling passes: an XID error, ECC errors or remapped ' +
  'rows, a hardware, power or thermal slowdown that began, PCIe replays, or the GPU lost. ' +
  'Processes: those on the GPU at that pass, with the calls each was waiting in.';

// One row per event, newest last as the agent lists them; `processes` is the cell's HTML.
export function gpuEventRows(doc) {
  return (doc.events ?? []).map((e) => ({
    ts_ns: e.ts_ns,
    gpu: e.gpu,
    kind: e.kind,
    detail: e.detail,
    count: e.count,
    processes: processesHtml(e.processes ?? []),
    pids: (e.processes ?? []).map((p) => p.pid),
  }));
}

// "pid comm (rank R, job J) in ncclAllReduce for 12 s", one process a line.
function processesHtml(processes) {
  if (!processes.length) return '<span class="muted">none</span>';
  return processes.map((p) => {
    const who = [p.rank != null ? `rank ${p.rank}` : '', p.job ? `job ${esc(p.job)}` : '', p.pod ? `${esc(p.namespace ?? '')}/${esc(p.pod)}` : '']
      .filter(Boolean).join(', ');
    const calls = (p.calls ?? []).map((c) => `<code>${esc(c.name)}</code> for ${duration(c.age_ns)}`).join(', ');
    return `<div><a href="#/process/${p.pid}">${p.pid}</a> ${esc(p.comm ?? '')}${who ? ` <span class="muted small">(${who})</span>` : ''}${calls ? ` in ${calls}` : ''}</div>`;
  }).join('');
}
