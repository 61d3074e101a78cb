// Each GPU's last sampling pass (/api/v1/gpus) as one row: utilization beside SM, tensor
// and DRAM activity (NVML GPM), which say how much of the GPU computed where utilization
// says only that a kernel was running.
import { bytes, esc, percent } from './format.js';

export const NO_GPM = 'no GPM profiling counters (Hopper or newer)';
export const GPM_HELP = 'Utilization only means a kernel was running; SM active and tensor active say how much of the GPU computed (the share of its SMs busy, and of its tensor cores), DRAM active how much of its memory bandwidth was used (NVML GPM profiling counters, Hopper or newer).';

// A GPU's GPM activity (`key` of its `gpm` object): the text and its tooltip. A GPU
// without GPM reads "—"; one with GPM but no reading yet (GPM needs two passes) "–".
export function gpmActivity(gpu, key) {
  if (gpu?.gpm_supported === false) return { text: '—', title: NO_GPM };
  const v = gpu?.gpm?.[key];
  if (v == null) return { text: '–', title: 'no reading yet: GPM compares two sampling passes' };
  return { text: percent(v, 0), title: '' };
}

function activityCell(gpu, key) {
  const a = gpmActivity(gpu, key);
  return `<td class="num${a.title ? ' no-gpm' : ''}" data-key="${key}"${a.title ? ` title="${esc(a.title)}"` : ''}>${a.text}</td>`;
}

// The table's HTML for a pass's GPUs ('' without one).
export function gpuNowHtml(pass) {
  const gpus = (pass?.gpus ?? []).filter((g) => !g.lost && !g.error);
  if (gpus.length === 0) return '';
  const rows = gpus.map((g) => `<tr data-gpu="${g.index}"><td>GPU ${g.index}</td><td>${esc(g.name ?? '')}</td>
    <td class="num" data-key="util">${g.utilization_gpu_percent == null ? '–' : `${g.utilization_gpu_percent}%`}</td>
    ${activityCell(g, 'sm_active')}${activityCell(g, 'tensor_active')}${activityCell(g, 'dram_active')}
    <td class="num">${bytes(g.memory_used_bytes)}${g.memory_total_bytes ? ` / ${bytes(g.memory_total_bytes)}` : ''}</td></tr>`);
  return `<table class="gpu-now"><thead><tr><th>GPU</th><th>Name</th>
    <th class="num" title="NVML utilization: the share of time a kernel was running">Utilization</th>
    <th class="num" title="the share of the SMs busy (GPM)">SM active</th>
    <th class="num" title="the share of time the tensor cores worked (GPM)">Tensor active</th>
    <th class="num" title="the share of the memory bandwidth used (GPM)">DRAM active</th>
    <th class="num">Memory used</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
