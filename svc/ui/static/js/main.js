// The UI's entry point: tabs, the URL state, the tenant, the time range and each view.

import { API, getJSON } from './api.js';
import { renderChart, renderVector } from './chart.js';
import { el } from './dom.js';
import { Editor } from './editor.js';
import { LabelBrowser } from './labels.js';
import { LogsView } from './logs.js';
import { isLogQuery, tokenize, withMatcher } from './logql.js';
import { SqlView } from './sql.js';
import { tokenizeSQL } from './sqltokens.js';
import { readURL, set, state } from './state.js';
import { TailView } from './tail.js';
import { niceStep, nsOf, timeRange } from './time.js';

const $ = (id) => document.getElementById(id);

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
}

const savedTheme = localStorage.getItem('svc.theme');
applyTheme(savedTheme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));

const explore = new Editor($('explore-editor'), {
  tokenize, label: 'LogQL query', placeholder: '{app="web"} |= "error"   (Ctrl+Enter runs)',
  historyKey: 'svc.history.logql', onRun: () => runExplore(), onFormat: () => formatQuery(),
});
const tailEditor = new Editor($('tail-editor'), {
  tokenize, label: 'LogQL query to tail', placeholder: '{app="web"}   (Ctrl+Enter starts)',
  historyKey: 'svc.history.logql', onRun: () => $('tail-start').click(),
});
const sqlEditor = new Editor($('sql-editor'), {
  tokenize: tokenizeSQL, label: 'SQL query', historyKey: 'svc.history.sql',
  placeholder: "SELECT labels['app'] AS app, count(*) FROM logs GROUP BY 1   (Ctrl+Enter runs)",
  onRun: () => runSQL(),
});

const results = $('results');
const labels = new LabelBrowser($('labels'), { onPick: (name, value) => addMatcher(name, value) });
let logsView = null;
let running = null;

function currentRange() {
  try {
    const range = timeRange(state.from, state.to);
    $('time-error').textContent = '';
    return range;
  } catch (error) {
    $('time-error').textContent = error.message;
    return null;
  }
}

function addMatcher(name, value) {
  explore.value = withMatcher(explore.value, name, value);
  runExplore();
}

function fillHistory() {
  const select = $('history');
  select.replaceChildren(el('option', { value: '', text: 'History…' }),
    ...explore.history().map((q) => el('option', { value: q, text: q.length > 80 ? `${q.slice(0, 80)}…` : q })));
}

async function runExplore(push = true) {
  const query = explore.value;
  set({ q: query }, push);
  running?.abort();
  const controller = new AbortController();
  running = controller;
  const range = currentRange();
  if (!range) return;
  labels.load(range);
  if (!query.trim()) {
    results.replaceChildren(el('p', { class: 'empty', text: 'Write a LogQL query, or pick a label and a value on the left.' }));
    return;
  }
  explore.remember(query);
  fillHistory();
  const { signal } = controller;
  try {
    if (isLogQuery(query)) {
      if (!logsView) {
        const mount = el('div', { class: 'logs-view' });
        results.replaceChildren(mount);
        logsView = new LogsView(mount, { onMatcher: addMatcher });
      }
      await logsView.run({ query, ...range, limit: state.limit, signal });
    } else {
      logsView = null;
      results.replaceChildren(el('p', { class: 'muted', text: 'Loading…' }));
      if (state.type === 'instant') {
        const body = await getJSON(`${API}/query`, { params: { query, time: nsOf(range.end) }, signal });
        renderVector(results, body.data);
      } else {
        const step = niceStep(range.end - range.start, 250);
        const body = await getJSON(`${API}/query_range`, {
          params: { query, start: nsOf(range.start), end: nsOf(range.end), step: `${step}` }, signal,
        });
        if (body.data.resultType === 'matrix') renderChart(results, body.data.result, range);
        else renderVector(results, body.data);
      }
    }
    if (running === controller) explore.clearError();
  } catch (error) {
    if (error.name === 'AbortError') return;
    explore.showError(error.message);
    logsView = null;
    results.replaceChildren(el('p', { class: 'empty', text: 'The query failed: see the message under the editor.' }));
  }
}

async function formatQuery() {
  try {
    const body = await getJSON(`${API}/format_query`, { params: { query: explore.value } });
    explore.value = body.data;
    set({ q: explore.value });
  } catch (error) {
    explore.showError(error.message);
  }
}

const sqlView = new SqlView({
  editor: sqlEditor, results: $('sql-results'), status: $('sql-status'), note: $('sql-note'),
  csv: $('sql-csv'), parquet: $('sql-parquet'), range: () => currentRange() ?? timeRange('now-1h', 'now'),
});

function runSQL() {
  set({ sql: sqlEditor.value }, true);
  if (sqlEditor.value.trim()) sqlView.run();
}

async function showSQL() {
  const range = currentRange();
  if (!range) return;
  try {
    const sql = await sqlView.explain(explore.value, { ...range, limit: state.limit });
    set({ tab: 'sql', sql }, true);
    showTab();
  } catch (error) {
    explore.showError(error.message);
  }
}

const tail = new TailView({
  editor: tailEditor, mount: $('tail-lines'), start: $('tail-start'), pause: $('tail-pause'),
  stop: $('tail-stop'), status: $('tail-status'), dropped: $('tail-dropped'),
});
$('tail-start').addEventListener('click', () => set({ tail: tailEditor.value }));

async function loadAbout() {
  const page = $('about-page');
  if (page.childElementCount) return;
  try {
    // The home page at / is the one source of the version and the links.
    const response = await fetch('/', { headers: { Accept: '*/*' } });
    const doc = new DOMParser().parseFromString(await response.text(), 'text/html');
    page.replaceChildren(...[...doc.body.children].map((node) => document.importNode(node, true)));
  } catch (error) {
    page.textContent = error.message;
  }
}

function showTab() {
  for (const section of document.querySelectorAll('[data-view]')) section.hidden = section.id !== state.tab;
  for (const button of document.querySelectorAll('[data-tab]')) button.setAttribute('aria-selected', String(button.dataset.tab === state.tab));
  $('timebar').hidden = state.tab === 'about' || state.tab === 'tail';
  if (state.tab === 'about') loadAbout();
}

// Inputs from the state, after a load or a move in the browser's history.
function syncInputs() {
  $('tenant').value = state.tenant;
  $('from').value = state.from;
  $('to').value = state.to;
  $('limit').value = state.limit;
  $('qtype').value = state.type;
  if (explore.value !== state.q) explore.value = state.q;
  if (tailEditor.value !== state.tail) tailEditor.value = state.tail;
  if (sqlEditor.value !== state.sql) sqlEditor.value = state.sql;
}

function rerun() {
  if (state.q.trim() || state.tab === 'explore') runExplore(false);
  if (state.tab === 'sql' && state.sql.trim()) sqlView.run();
}

for (const button of document.querySelectorAll('[data-tab]')) {
  button.addEventListener('click', () => {
    set({ tab: button.dataset.tab }, true);
    showTab();
  });
}
$('tenant').addEventListener('change', () => {
  set({ tenant: $('tenant').value.trim() }, true);
  tail.end('stopped: tenant changed');
  rerun();
});
for (const id of ['from', 'to']) {
  $(id).addEventListener('change', () => {
    set({ [id]: $(id).value.trim() });
    if (currentRange()) rerun();
  });
}
$('quick').addEventListener('change', () => {
  if (!$('quick').value) return;
  set({ from: $('quick').value, to: 'now' });
  $('quick').value = '';
  syncInputs();
  rerun();
});
$('limit').addEventListener('change', () => set({ limit: $('limit').value || '1000' }));
$('qtype').addEventListener('change', () => {
  set({ type: $('qtype').value });
  runExplore();
});
$('run').addEventListener('click', () => runExplore());
$('format').addEventListener('click', () => formatQuery());
$('show-sql').addEventListener('click', () => showSQL());
$('sql-run').addEventListener('click', () => runSQL());
$('history').addEventListener('change', () => {
  if (!$('history').value) return;
  explore.value = $('history').value;
  $('history').value = '';
  runExplore();
});
$('theme').addEventListener('click', () => {
  const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  localStorage.setItem('svc.theme', next);
  applyTheme(next);
});
window.addEventListener('popstate', () => {
  readURL();
  syncInputs();
  showTab();
  rerun();
});

readURL();
set({});
syncInputs();
fillHistory();
showTab();
rerun();
getJSON(`${API}/status/buildinfo`).then((info) => {
  $('brand').textContent = `svc ${info.version}`;
  document.title = `svc ${info.version}`;
}).catch(() => {});
document.body.dataset.ready = 'true';
