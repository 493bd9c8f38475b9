// A virtualised list: only the rows in view (and a margin) exist in the DOM.

import { el } from './dom.js';

const MARGIN = 15;

export class VirtualList {
  constructor(mount, { rowHeight, render, onNearEnd }) {
    this.rowHeight = rowHeight;
    this.render = render;
    this.onNearEnd = onNearEnd;
    this.count = 0;
    this.rows = new Map();
    this.spacer = el('div', { class: 'vl-spacer' });
    this.viewport = el('div', { class: 'vl-viewport', role: 'list' }, this.spacer);
    mount.append(this.viewport);
    this.pending = false;
    this.viewport.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(this.viewport);
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.paint();
    });
  }

  // New content: every row is rendered again.
  reset(count, { keepScroll = false } = {}) {
    for (const row of this.rows.values()) row.remove();
    this.rows.clear();
    this.setCount(count);
    if (!keepScroll) this.viewport.scrollTop = 0;
    this.paint();
  }

  setCount(count) {
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
  }

  // More rows after the current ones.
  grow(count) {
    this.setCount(count);
    this.paint();
  }

  scrollToEnd() {
    this.viewport.scrollTop = this.viewport.scrollHeight;
    this.paint();
  }

  paint() {
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / this.rowHeight) - MARGIN);
    const last = Math.min(this.count, Math.ceil((top + height) / this.rowHeight) + MARGIN);
    for (const [index, row] of this.rows) {
      if (index < first || index >= last) {
        row.remove();
        this.rows.delete(index);
      }
    }
    for (let index = first; index < last; index++) {
      if (this.rows.has(index)) continue;
      const row = this.render(index);
      row.style.top = `${index * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      this.rows.set(index, row);
      this.spacer.append(row);
    }
    if (this.onNearEnd && this.count && last >= this.count - 5) this.onNearEnd();
  }
}
