// Sortable, filterable tables: click a header to sort (again to reverse), type to
// filter. A new set of rows is rendered as one HTML string; a live update of the same
// rows rewrites only the cells that changed, and only in rows on or near the screen: the
// others keep their new cells pending until they scroll into view. A cell without markup
// is set as text, which spares the browser's HTML parser.
import { esc } from './format.js';

function compare(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

// Rows sorted by `key` (dir 1 ascending, -1 descending); missing values go last either way.
export function sortRows(rows, key, dir) {
  return [...rows].sort((x, y) => {
    const a = x[key];
    const b = y[key];
    const am = a == null || a === '';
    const bm = b == null || b === '';
    if (am || bm) return am === bm ? 0 : am ? 1 : -1;
    return dir * compare(a, b);
  });
}

// Rows where any of `fields` contains `text` (case-insensitive); all rows for "".
export function filterRows(rows, text, fields) {
  const needle = text.trim().toLowerCase();
  if (needle === '') return rows;
  return rows.filter((r) => fields.some((f) => String(r[f] ?? '').toLowerCase().includes(needle)));
}

export class Table {
  // columns: [{key, label, html(row) => string, num, title}]
  constructor(container, { columns, sort, filterFields, filterLabel, empty, id, limit }) {
    this.columns = columns;
    this.sort = sort ?? { key: columns[0].key, dir: 1 };
    this.filterFields = filterFields;
    this.empty = empty ?? 'Nothing yet.';
    this.limit = limit ?? 500;
    this.rows = [];
    this.filter = '';
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    if (filterFields) {
      const input = document.createElement('input');
      input.type = 'search';
      input.className = 'filter';
      input.placeholder = filterLabel ?? 'Filter';
      input.setAttribute('aria-label', filterLabel ?? 'Filter');
      input.addEventListener('input', () => {
        this.filter = input.value;
        this.render();
      });
      wrap.append(input);
    }
    this.table = document.createElement('table');
    if (id) this.table.id = id;
    this.table.innerHTML = `<thead><tr>${columns
      .map((c) => `<th data-key="${esc(c.key)}" class="${c.num ? 'num' : ''}" title="${esc(c.title ?? '')}">${esc(c.label)}</th>`)
      .join('')}</tr></thead><tbody></tbody>`;
    this.table.tHead.addEventListener('click', (e) => {
      const th = e.target.closest('th');
      if (!th) return;
      const key = th.dataset.key;
      this.sort = { key, dir: this.sort.key === key ? -this.sort.dir : columns.find((c) => c.key === key).num ? -1 : 1 };
      this.render();
    });
    // Rows on or near the screen (IntersectionObserver), and the cells waiting for the
    // others.
    this.near = new Set();
    this.pending = new Map();
    this.observer = typeof IntersectionObserver === 'function'
      ? new IntersectionObserver((entries) => this.seen(entries), { rootMargin: '300px 0px' })
      : null;
    this.note = document.createElement('p');
    this.note.className = 'muted small';
    wrap.append(this.table, this.note);
    container.append(wrap);
  }

  setRows(rows) {
    this.rows = rows;
    this.render();
  }

  render() {
    let rows = this.filterFields ? filterRows(this.rows, this.filter, this.filterFields) : this.rows;
    rows = sortRows(rows, this.sort.key, this.sort.dir);
    for (const th of this.table.tHead.rows[0].cells) {
      th.setAttribute('aria-sort', th.dataset.key === this.sort.key ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
    const shown = rows.slice(0, this.limit);
    const cells = shown.map((r) => this.columns.map((c) => (c.html ? c.html(r) : esc(r[c.key]))));
    const body = this.table.tBodies[0];
    // Same rows as last time: only the cells that changed are rewritten, so an update
    // costs the browser little layout (most cells of a live table keep their text).
    if (this.cells && this.cells.length === cells.length && cells.length > 0 && this.cells[0] !== null) {
      cells.forEach((row, i) => {
        const tr = body.rows[i];
        const shown = this.pending.get(tr) ?? this.cells[i];
        if (!this.observer || this.near.has(tr)) {
          this.pending.delete(tr);
          patchRow(tr, shown, row);
        } else {
          this.pending.set(tr, shown); // off screen: patched when it comes near
        }
      });
    } else if (cells.length > 0) {
      this.observer?.disconnect();
      this.near.clear();
      this.pending.clear();
      body.innerHTML = cells.map((row) => `<tr>${row.map((html, j) => `<td class="${this.columns[j].num ? 'num' : ''}">${html}</td>`).join('')}</tr>`).join('');
      if (this.observer) for (const tr of body.rows) this.observer.observe(tr);
    } else {
      this.observer?.disconnect();
      this.near.clear();
      this.pending.clear();
      body.innerHTML = `<tr><td colspan="${this.columns.length}" class="muted">${esc(this.empty)}</td></tr>`;
    }
    this.cells = cells.length > 0 ? cells : [null];
    this.note.textContent = rows.length > shown.length ? `${shown.length} of ${rows.length} shown` : '';
  }

  // Rows coming near the screen get their pending cells; rows leaving it stop being patched.
  seen(entries) {
    for (const e of entries) {
      const tr = e.target;
      if (!e.isIntersecting) {
        this.near.delete(tr);
        continue;
      }
      this.near.add(tr);
      const shown = this.pending.get(tr);
      if (shown && this.cells?.[tr.sectionRowIndex]) patchRow(tr, shown, this.cells[tr.sectionRowIndex]);
      this.pending.delete(tr);
    }
  }
}

// Rewrites the cells of `tr` whose HTML differs between `shown` and `next`: as text where
// the HTML has no markup or entity (no parsing), else as HTML.
export function patchRow(tr, shown, next) {
  next.forEach((html, j) => {
    if (shown[j] === html) return;
    const td = tr.cells[j];
    if (/[<&]/.test(html)) td.innerHTML = html;
    else td.textContent = html;
  });
}
