// Folded stacks ("a;b;c 12" per line, as /api/v1/python/folded writes them) into the
// tree d3-flame-graph draws: {name, value, children}.

export function foldedToTree(text, rootName = 'all') {
  const root = { name: rootName, value: 0, children: [] };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const samples = Number(line.slice(sp + 1));
    if (!Number.isFinite(samples) || samples <= 0) continue;
    const frames = line.slice(0, sp).split(';');
    root.value += samples;
    let node = root;
    for (const frame of frames) {
      let child = node.children.find((c) => c.name === frame);
      if (!child) {
        child = { name: frame, value: 0, children: [] };
        node.children.push(child);
      }
      child.value += samples;
      node = child;
    }
  }
  return root;
}
