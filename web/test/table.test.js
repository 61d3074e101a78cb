import { describe, expect, it } from 'vitest';
import { patchRow } from '../src/table.js';

// A row of cells that records how each was written (no DOM here).
function fakeRow(texts) {
  const cells = texts.map((t) => {
    const cell = { writes: [], value: t };
    Object.defineProperty(cell, 'innerHTML', { set(v) { cell.writes.push(['html', v]); cell.value = v; } });
    Object.defineProperty(cell, 'textContent', { set(v) { cell.writes.push(['text', v]); cell.value = v; } });
    return cell;
  });
  return { cells };
}

describe('patchRow', () => {
  it('rewrites only the cells that changed', () => {
    const tr = fakeRow(['a', '1', '2']);
    patchRow(tr, ['a', '1', '2'], ['a', '1', '3']);
    expect(tr.cells[0].writes).toEqual([]);
    expect(tr.cells[1].writes).toEqual([]);
    expect(tr.cells[2].writes).toEqual([['text', '3']]);
  });
  it('writes plain text as text and markup or entities as HTML', () => {
    const tr = fakeRow(['', '', '']);
    patchRow(tr, ['', '', ''], ['12.5 µs', '<a href="#/process/7">x</a>', 'a &amp; b']);
    expect(tr.cells[0].writes).toEqual([['text', '12.5 µs']]);
    expect(tr.cells[1].writes).toEqual([['html', '<a href="#/process/7">x</a>']]);
    expect(tr.cells[2].writes).toEqual([['html', 'a &amp; b']]);
  });
});
