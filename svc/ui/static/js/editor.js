// A code editor: a textarea over a highlighted copy of its text, with the server's error
// shown under it and marked at its line and column, and a history of run queries.

import { el } from './dom.js';
import { errorOffset } from './logql.js';

const HISTORY_SIZE = 50;
const MAX_HEIGHT = 260;

export class Editor {
  constructor(mount, { tokenize, placeholder, label, onRun, onFormat, historyKey }) {
    this.tokenize = tokenize;
    this.onRun = onRun;
    this.onFormat = onFormat;
    this.historyKey = historyKey;
    this.highlight = el('pre', { class: 'hl', 'aria-hidden': 'true' });
    this.input = el('textarea', {
      class: 'code', spellcheck: 'false', autocomplete: 'off', rows: 1, placeholder,
      'aria-label': label, autocapitalize: 'off',
    });
    this.error = el('div', { class: 'editor-error', role: 'alert', hidden: true });
    this.box = el('div', { class: 'editor' }, this.highlight, this.input);
    mount.append(this.box, this.error);
    // The width changes the wrapping, and so the height.
    new ResizeObserver(() => this.fit()).observe(this.box);
    this.mark = null;
    this.input.addEventListener('input', () => {
      this.mark = null;
      this.error.hidden = true;
      this.render();
    });
    this.input.addEventListener('scroll', () => {
      this.highlight.scrollTop = this.input.scrollTop;
      this.highlight.scrollLeft = this.input.scrollLeft;
    });
    this.input.addEventListener('keydown', (event) => this.key(event));
  }

  key(event) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      this.onRun?.();
    } else if (event.altKey && event.shiftKey && event.code === 'KeyF' && this.onFormat) {
      event.preventDefault();
      this.onFormat();
    }
  }

  get value() {
    return this.input.value;
  }

  set value(text) {
    this.input.value = text;
    this.mark = null;
    this.error.hidden = true;
    this.render();
  }

  render() {
    const text = this.input.value;
    const nodes = [];
    for (const token of this.tokenize(text)) {
      const inMark = this.mark && token.start <= this.mark && this.mark < token.start + token.text.length;
      if (inMark) {
        const cut = this.mark - token.start;
        if (cut) nodes.push(el('span', { class: `tok-${token.type}` }, token.text.slice(0, cut)));
        nodes.push(el('span', { class: `tok-${token.type} err-mark` }, token.text.slice(cut)));
      } else {
        nodes.push(el('span', { class: `tok-${token.type}` }, token.text));
      }
    }
    if (this.mark !== null && this.mark >= text.length) nodes.push(el('span', { class: 'err-mark at-end' }, ' '));
    // A trailing newline needs a character after it to take its height.
    nodes.push('\n');
    this.highlight.replaceChildren(...nodes);
    this.fit();
  }

  // As tall as the text, wrapped lines included (up to a limit, then it scrolls).
  fit() {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, MAX_HEIGHT)}px`;
  }

  // Show the server's message under the editor, and mark the place it names.
  showError(message) {
    const offset = errorOffset(this.input.value, message);
    this.mark = offset;
    this.error.replaceChildren(el('span', { class: 'error-text' }, message));
    if (offset !== null) {
      const before = this.input.value.slice(0, offset).split('\n');
      this.error.dataset.line = before.length;
      this.error.dataset.col = before[before.length - 1].length + 1;
      this.error.prepend(el('button', {
        class: 'link', text: `line ${this.error.dataset.line}, col ${this.error.dataset.col}`,
        onclick: () => {
          this.input.focus();
          this.input.setSelectionRange(offset, offset);
        },
      }), ' ');
    }
    this.error.hidden = false;
    this.render();
  }

  clearError() {
    this.mark = null;
    this.error.hidden = true;
    this.render();
  }

  history() {
    try {
      return JSON.parse(localStorage.getItem(this.historyKey) || '[]');
    } catch {
      return [];
    }
  }

  remember(query) {
    if (!this.historyKey || !query.trim()) return;
    const entries = [query, ...this.history().filter((q) => q !== query)].slice(0, HISTORY_SIZE);
    localStorage.setItem(this.historyKey, JSON.stringify(entries));
  }
}
