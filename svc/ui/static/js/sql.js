// The SQL console: run a statement over the tenant's `logs` and `streams` views, see the
// columns with their types, download the result as CSV or Parquet.

import { API, call, getJSON } from './api.js';
import { el, saveBlob } from './dom.js';
import { nsOf } from './time.js';

const SHOWN_ROWS = 2000;

const cell = (value) => (value === null ? 'NULL' : typeof value === 'object' ? JSON.stringify(value) : String(value));

export class SqlView {
  constructor({ editor, results, status, note, csv, parquet, range }) {
    Object.assign(this, { editor, results, status, note, range });
    csv.addEventListener('click', () => this.download('text/csv', 'csv'));
    parquet.addEventListener('click', () => this.download('application/vnd.columnar.parquet', 'parquet'));
  }

  body() {
    const { start, end } = this.range();
    return JSON.stringify({ query: this.editor.value, start: nsOf(start), end: nsOf(end) });
  }

  async run() {
    this.editor.remember(this.editor.value);
    this.status.textContent = 'Running…';
    const began = performance.now();
    try {
      const body = await getJSON(`${API}/sql`, {
        method: 'POST', body: this.body(), headers: { 'Content-Type': 'application/json' },
      });
      this.editor.clearError();
      this.show(body);
      const { returnedRows } = body.stats;
      this.status.textContent = `${returnedRows} row${returnedRows === 1 ? '' : 's'}${body.data.truncated ? ' (truncated)' : ''} in ${Math.round(performance.now() - began)} ms`;
    } catch (error) {
      this.status.textContent = '';
      this.editor.showError(error.message);
    }
  }

  show(body) {
    const { columns, rows } = body.data;
    const head = el('tr', {}, columns.map((c) => el('th', {}, el('span', { text: c.name }), el('span', { class: 'type', text: c.type }))));
    const numeric = columns.map((c) => /INT|DOUBLE|FLOAT|DECIMAL|REAL|HUGEINT/.test(c.type));
    const bodyRows = rows.slice(0, SHOWN_ROWS).map((row) => el('tr', {},
      row.map((value, i) => el('td', { class: numeric[i] ? 'num' : undefined, text: cell(value) }))));
    this.results.replaceChildren(el('table', { class: 'grid-table sql-table' }, el('thead', {}, head), el('tbody', {}, bodyRows)));
    if (rows.length > SHOWN_ROWS) this.results.append(el('p', { class: 'small muted', text: `First ${SHOWN_ROWS} of ${rows.length} rows shown; download for all.` }));
  }

  async download(accept, ext) {
    try {
      const response = await call(`${API}/sql`, {
        method: 'POST', body: this.body(), headers: { 'Content-Type': 'application/json', Accept: accept },
      });
      saveBlob(await response.blob(), `svc-sql.${ext}`);
      this.editor.clearError();
    } catch (error) {
      this.editor.showError(error.message);
    }
  }

  // Start from the SQL a LogQL query compiles to.
  async explain(query, { start, end, limit }) {
    const body = await getJSON(`${API}/sql/explain`, { params: { query, start: nsOf(start), end: nsOf(end), limit } });
    const { sql, runnable, kind } = body.data;
    this.editor.value = sql;
    this.note.textContent = runnable
      ? `The SQL of the ${kind} query ${query}, over the same views this console reads.`
      : `The SQL of the ${kind} query ${query}; it shows how the query runs, but cannot run here as it is.`;
    this.note.hidden = false;
    return sql;
  }
}
