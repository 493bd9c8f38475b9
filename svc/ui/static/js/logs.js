// Log results: the volume histogram above a virtualised table of lines, line details,
// infinite scroll backwards in time, and downloads of the whole result.

import { API, call, getJSON } from './api.js';
import { el, saveBlob } from './dom.js';
import { levelOf, renderHistogram } from './histogram.js';
import { filterRegExp } from './logql.js';
import { formatTime, msOf, niceStep, nsOf } from './time.js';
import { VirtualList } from './vlist.js';

const ROW_HEIGHT = 24;
const SHOWN_CHARS = 2000;
const CATEGORIZE = { 'X-Loki-Response-Encoding-Flags': 'categorize-labels' };

const newestFirst = (a, b) => (b.ts.length - a.ts.length) || (b.ts < a.ts ? -1 : b.ts > a.ts ? 1 : 0);

// One row per entry, newest first, from a categorized `streams` result.
export function flatten(streams) {
  const rows = [];
  for (const { stream, values } of streams) {
    for (const [ts, line, extra] of values) {
      const metadata = extra?.structuredMetadata || {};
      const parsed = extra?.parsed || {};
      rows.push({ ts, line, stream, metadata, parsed, level: levelOf({ ...stream, ...parsed, ...metadata }) });
    }
  }
  return rows.sort(newestFirst);
}

const rowKey = (r) => `${r.ts}\u0000${JSON.stringify(r.stream)}\u0000${r.line}`;

// The line as text and <mark>s where the query's line filters match.
export function highlighted(line, pattern) {
  const text = line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS)}…` : line;
  if (!pattern) return [text];
  const parts = [];
  let last = 0;
  pattern.lastIndex = 0;
  for (const match of text.matchAll(pattern)) {
    if (!match[0]) continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(el('mark', {}, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

export class LogsView {
  constructor(mount, { onMatcher }) {
    this.onMatcher = onMatcher;
    this.histogram = el('div', { class: 'histogram', 'aria-label': 'log volume' });
    this.summary = el('span', { class: 'summary' });
    this.more = el('span', { class: 'small more' });
    const download = (label, accept, ext) => el('button', {
      class: 'small-button', text: label, onclick: () => this.download(accept, ext),
    });
    this.toolbar = el('div', { class: 'logs-toolbar' }, this.summary, this.more,
      el('span', { class: 'spacer' }),
      download('Download JSON lines', 'application/x-ndjson', 'jsonl'),
      download('Download Parquet', 'application/vnd.columnar.parquet', 'parquet'));
    this.tableBox = el('div', { class: 'lines-box logs-table' });
    this.details = el('aside', { class: 'details', hidden: true, 'aria-label': 'line details' });
    mount.replaceChildren(this.histogram, this.toolbar,
      el('div', { class: 'logs-main' }, this.tableBox, this.details));
    this.rows = [];
    this.list = new VirtualList(this.tableBox, {
      rowHeight: ROW_HEIGHT,
      render: (i) => this.renderRow(i),
      onNearEnd: () => this.loadOlder(),
    });
    this.list.viewport.addEventListener('click', (event) => this.click(event));
    this.list.viewport.addEventListener('keydown', (event) => {
      const row = event.target.closest('.log-row');
      if (row && event.key === 'Enter') this.showDetails(Number(row.dataset.index));
    });
  }

  // Run a log query: the lines and the histogram are asked for at once.
  async run({ query, start, end, limit, signal }) {
    this.request = { query, start, end, limit, signal };
    this.pattern = filterRegExp(query);
    this.done = false;
    this.loading = false;
    this.details.hidden = true;
    this.summary.textContent = 'Loading…';
    this.more.textContent = '';
    this.histogram.replaceChildren(el('div', { class: 'small muted', text: 'Loading volume…' }));
    const volume = this.loadHistogram(query, start, end, signal).catch((error) => {
      if (error.name !== 'AbortError') this.histogram.replaceChildren(el('div', { class: 'small muted', text: `No volume: ${error.message}` }));
    });
    const request = this.request;
    const lines = this.fetchLines(end).then((page) => {
      if (request === this.request) this.show(page);
    });
    await Promise.all([lines, volume]);
  }

  async loadHistogram(query, start, end, signal) {
    const stepS = niceStep(end - start, 100);
    // The newline ends a trailing # comment of the query.
    const metric = `sum by (detected_level) (count_over_time(${query}\n[${stepS}s]))`;
    const body = await getJSON(`${API}/query_range`, {
      params: { query: metric, start: nsOf(start), end: nsOf(end), step: `${stepS}` }, signal,
    });
    renderHistogram(this.histogram, body.data.result, { start, end, stepMs: stepS * 1000 });
  }

  async fetchLines(endMs, endNs) {
    const { query, start, limit, signal } = this.request;
    const response = await call(`${API}/query_range`, {
      params: { query, start: nsOf(start), end: endNs ?? nsOf(endMs), limit, direction: 'backward' },
      headers: CATEGORIZE, signal,
    });
    const began = performance.now();
    const body = await response.json();
    return { body, began };
  }

  show({ body, began }) {
    this.rows = flatten(body.data.result);
    this.keys = new Set(this.rows.map(rowKey));
    this.done = this.rows.length < Number(this.request.limit);
    this.list.reset(this.rows.length);
    this.updateSummary();
    // Time from the answer's arrival to the painted rows (the task after the next frame),
    // read by the browser tests.
    const rows = this.rows.length;
    requestAnimationFrame(() => setTimeout(() => {
      window.svcRenderTimings = [...(window.svcRenderTimings || []), { rows, ms: performance.now() - began }];
    }, 0));
  }

  updateSummary() {
    const n = this.rows.length;
    this.summary.textContent = n ? `${n} line${n === 1 ? '' : 's'}` : 'No lines in this range.';
    if (n) {
      const oldest = formatTime(msOf(this.rows[n - 1].ts));
      this.more.textContent = this.done ? `back to ${oldest}, all of the range` : `back to ${oldest}; scroll for older lines`;
    }
  }

  // The next page back in time, when the list is scrolled to its end.
  async loadOlder() {
    if (this.done || this.loading || !this.rows.length) return;
    this.loading = true;
    const request = this.request;
    try {
      const oldest = this.rows[this.rows.length - 1].ts;
      // The end is exclusive: ask up to one nanosecond after the oldest line and drop
      // the lines already shown, so that lines sharing its timestamp are not lost.
      const endNs = (BigInt(oldest) + 1n).toString();
      const { body } = await this.fetchLines(null, endNs);
      if (request !== this.request) return;
      const page = flatten(body.data.result);
      const fresh = page.filter((r) => !this.keys.has(rowKey(r)));
      for (const r of fresh) this.keys.add(rowKey(r));
      this.rows.push(...fresh);
      this.done = page.length < Number(this.request.limit) || !fresh.length;
      this.list.grow(this.rows.length);
      this.updateSummary();
    } catch (error) {
      if (request !== this.request) return;
      // No retry loop: a new run tries again.
      this.done = true;
      if (error.name !== 'AbortError') this.more.textContent = `Could not load older lines: ${error.message}`;
    } finally {
      this.loading = false;
    }
    // Still at the end (the page did not fill the view): the next one.
    this.list.schedule();
  }

  renderRow(index) {
    const r = this.rows[index];
    const chips = Object.entries(r.stream).map(([name, value]) => el('button', {
      class: 'chip', title: `Add ${name}="${value}" to the query`, dataset: { name, value },
    }, el('span', { class: 'chip-name' }, name), '=', value));
    return el('div', {
      class: `log-row level-${r.level}${this.selected === index ? ' selected' : ''}`,
      role: 'listitem', tabindex: '0', dataset: { index },
    },
    el('span', { class: 'ts' }, formatTime(msOf(r.ts))),
    el('span', { class: 'chips' }, chips),
    el('span', { class: 'line' }, highlighted(r.line, this.pattern)));
  }

  click(event) {
    const chip = event.target.closest('.chip');
    if (chip) {
      this.onMatcher(chip.dataset.name, chip.dataset.value);
      return;
    }
    const row = event.target.closest('.log-row');
    if (row) this.showDetails(Number(row.dataset.index));
  }

  showDetails(index) {
    const r = this.rows[index];
    this.selected = index;
    for (const row of this.list.rows.values()) row.classList.toggle('selected', Number(row.dataset.index) === index);
    const section = (title, labels, addable) => {
      const names = Object.keys(labels).sort();
      return el('section', { class: 'details-section' }, el('h3', { text: title }),
        names.length ? el('table', { class: 'kv' }, names.map((name) => el('tr', {},
          el('th', { text: name }),
          el('td', { text: labels[name] }),
          el('td', {}, addable ? el('button', {
            class: 'small-button', text: '+', title: `Add ${name}="${labels[name]}" to the query`,
            onclick: () => this.onMatcher(name, labels[name]),
          }) : null)))) : el('p', { class: 'muted small', text: 'none' }));
    };
    this.details.replaceChildren(
      el('div', { class: 'details-head' }, el('strong', { text: formatTime(msOf(r.ts)) }),
        el('span', { class: 'muted small', text: ` ${r.ts} ns` }),
        el('button', { class: 'ghost close', text: '×', title: 'Close', onclick: () => { this.details.hidden = true; } })),
      el('pre', { class: 'details-line' }, r.line),
      section('Stream labels', r.stream, true),
      section('Structured metadata', r.metadata, false),
      section('Parsed fields', r.parsed, false));
    this.details.hidden = false;
  }

  // The whole result (no line limit) through the export endpoint.
  async download(accept, ext) {
    if (!this.request) return;
    const { query, start, end } = this.request;
    try {
      const response = await call(`${API}/export`, {
        params: { query, start: nsOf(start), end: nsOf(end) }, headers: { Accept: accept },
      });
      saveBlob(await response.blob(), `svc-logs.${ext}`);
    } catch (error) {
      this.more.textContent = `Download failed: ${error.message}`;
    }
  }
}
