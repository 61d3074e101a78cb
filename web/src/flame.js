// The Python hot spots as a flame graph (d3-flame-graph), loaded on first use so the
// overview's first paint does not wait for d3.
import { foldedToTree } from './folded.js';

export async function drawFlame(container, foldedText, title) {
  const tree = foldedToTree(foldedText, title);
  container.replaceChildren();
  if (tree.value === 0) return 0;
  const [{ select }, { flamegraph }] = await Promise.all([import('d3-selection'), import('d3-flame-graph'), import('d3-flame-graph/dist/d3-flamegraph.css')]);
  const chart = flamegraph()
    .width(Math.max(320, container.clientWidth))
    .cellHeight(18)
    .transitionDuration(0)
    .minFrameSize(2)
    .sort(true)
    .title('')
    .selfValue(false)
    .label((d) => `${d.data.name}: ${d.value} samples`);
  select(container).datum(tree).call(chart);
  return tree.value;
}
