// The label browser: label names, then a label's values with how many series carry each.

import { API, getJSON } from './api.js';
import { el } from './dom.js';
import { quote } from './logql.js';
import { nsOf } from './time.js';

export class LabelBrowser {
  constructor(mount, { onPick }) {
    this.onPick = onPick;
    this.names = el('div', { class: 'label-names' });
    this.values = el('div', { class: 'label-values' });
    this.status = el('div', { class: 'small muted' });
    mount.replaceChildren(el('h2', { text: 'Labels' }), this.status, this.names, this.values);
  }

  async load({ start, end }) {
    this.range = { start: nsOf(start), end: nsOf(end) };
    this.values.replaceChildren();
    this.status.textContent = 'Loading…';
    try {
      const body = await getJSON(`${API}/labels`, { params: this.range });
      const names = body.data || [];
      this.status.textContent = names.length ? '' : 'No labels in this range.';
      this.names.replaceChildren(...names.map((name) => el('button', {
        class: 'label-name', text: name, dataset: { name }, onclick: () => this.open(name),
      })));
    } catch (error) {
      this.status.textContent = error.message;
      this.names.replaceChildren();
    }
  }

  async open(name) {
    for (const button of this.names.children) button.classList.toggle('active', button.dataset.name === name);
    this.values.replaceChildren(el('div', { class: 'small muted', text: `Loading ${name}…` }));
    try {
      const [values, series] = await Promise.all([
        getJSON(`${API}/label/${encodeURIComponent(name)}/values`, { params: this.range }),
        getJSON(`${API}/series`, { params: { ...this.range, 'match[]': `{${name}=~".+"}` } }),
      ]);
      const counts = new Map();
      for (const labels of series.data || []) counts.set(labels[name], (counts.get(labels[name]) || 0) + 1);
      this.values.replaceChildren(el('h3', { text: name }), ...(values.data || []).map((value) => el('button', {
        class: 'label-value', title: `Add ${name}=${quote(value)} to the query`, dataset: { value },
        onclick: () => this.onPick(name, value),
      }, el('span', { class: 'value-text', text: value }),
      el('span', { class: 'count', text: String(counts.get(value) || 0), title: 'series' }))));
    } catch (error) {
      this.values.replaceChildren(el('div', { class: 'small error-text', text: error.message }));
    }
  }
}
