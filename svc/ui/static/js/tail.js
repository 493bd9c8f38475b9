// Live tail over the WebSocket endpoint, with pause/resume and the dropped-entries count.

import { API, getJSON } from './api.js';
import { el } from './dom.js';
import { flatten, highlighted } from './logs.js';
import { filterRegExp } from './logql.js';
import { state } from './state.js';
import { formatTime, msOf, nsOf } from './time.js';
import { VirtualList } from './vlist.js';

const MAX_ROWS = 20000;
const HISTORY_LIMIT = 100;

const hex = (text) => [...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, '0')).join('');

export class TailView {
  constructor({ editor, mount, start, pause, stop, status, dropped }) {
    Object.assign(this, { editor, start, pause, stop, status, dropped });
    this.rows = [];
    this.buffer = [];
    this.list = new VirtualList(mount, { rowHeight: 24, render: (i) => this.renderRow(i) });
    start.addEventListener('click', () => this.begin());
    pause.addEventListener('click', () => this.togglePause());
    stop.addEventListener('click', () => this.end('stopped'));
  }

  // Check the query with the server's parser first: its message goes under the editor.
  async begin() {
    const query = this.editor.value;
    this.end();
    try {
      await getJSON(`${API}/format_query`, { params: { query } });
    } catch (error) {
      this.editor.showError(error.message);
      return;
    }
    this.editor.clearError();
    this.editor.remember(query);
    this.pattern = filterRegExp(query);
    this.rows = [];
    this.buffer = [];
    this.droppedCount = 0;
    this.dropped.hidden = true;
    this.list.reset(0);
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const params = new URLSearchParams({ query, limit: String(HISTORY_LIMIT), start: nsOf(Date.now() - 3600e3) });
    const protocols = state.tenant ? [`svc.tenant.${hex(state.tenant)}`] : [];
    const socket = new WebSocket(`${scheme}://${location.host}/loki/api/v1/tail?${params}`, protocols);
    this.socket = socket;
    this.paused = false;
    this.setStatus('connecting…');
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.setStatus('live');
    };
    socket.onmessage = (event) => this.receive(JSON.parse(event.data));
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.buttons(false);
      if (!opened) {
        // A refused upgrade reaches a browser as a bare 1006: name the usual causes.
        this.setStatus('refused by the server: check the tenant (one, and allowed) and the query');
      } else {
        this.setStatus(event.code === 1000 || event.code === 1005 ? 'closed' : `closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`);
      }
    };
    this.buttons(true);
  }

  receive(message) {
    if (message.dropped_entries?.length) {
      this.droppedCount += message.dropped_entries.length;
      this.dropped.textContent = `${this.droppedCount} dropped`;
      this.dropped.title = 'Entries the server could not send fast enough';
      this.dropped.hidden = false;
    }
    const rows = flatten(message.streams || []).reverse();
    if (this.paused) {
      this.buffer.push(...rows);
      this.setStatus(`paused, ${this.buffer.length} new`);
      return;
    }
    this.append(rows);
  }

  append(rows) {
    if (!rows.length) return;
    const atEnd = this.list.viewport.scrollTop + this.list.viewport.clientHeight >= this.list.viewport.scrollHeight - 30;
    this.rows.push(...rows);
    const excess = this.rows.length - MAX_ROWS;
    if (excess > 0) {
      this.rows.splice(0, excess);
      this.list.reset(this.rows.length, { keepScroll: true });
    } else {
      this.list.grow(this.rows.length);
    }
    if (atEnd) this.list.scrollToEnd();
  }

  togglePause() {
    this.paused = !this.paused;
    this.pause.textContent = this.paused ? 'Resume' : 'Pause';
    if (!this.paused) {
      this.append(this.buffer);
      this.buffer = [];
      this.setStatus('live');
    } else {
      this.setStatus('paused');
    }
  }

  end(reason) {
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.close(1000);
    this.buttons(false);
    if (reason) this.setStatus(reason);
  }

  buttons(running) {
    this.start.disabled = running;
    this.pause.disabled = !running;
    this.stop.disabled = !running;
    this.pause.textContent = 'Pause';
  }

  setStatus(text) {
    this.status.textContent = text;
  }

  renderRow(index) {
    const r = this.rows[index];
    return el('div', { class: `log-row level-${r.level}`, role: 'listitem' },
      el('span', { class: 'ts' }, formatTime(msOf(r.ts))),
      el('span', { class: 'chips' }, Object.entries(r.stream).map(([name, value]) =>
        el('span', { class: 'chip static' }, el('span', { class: 'chip-name' }, name), '=', value))),
      el('span', { class: 'line' }, highlighted(r.line, this.pattern)));
  }
}
