// Metric results: a time-series chart (legend, hover values, series toggling) for range
// queries, a table for instant ones.

import { el, labelsText, seriesColor, svg } from './dom.js';
import { formatTime, shortTime } from './time.js';

const W = 1000;
const H = 300;
const PAD = { left: 60, right: 10, top: 10, bottom: 24 };

function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((m) => m >= value);
}

const formatValue = (v) => (Math.abs(v) >= 1e5 || (v && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(+v.toFixed(4)));

export function renderChart(mount, matrix, { start, end }) {
  const series = matrix.map((s, i) => ({
    name: labelsText(s.metric),
    color: seriesColor(i),
    points: s.values.map(([t, v]) => [t * 1000, Number(v)]),
    hidden: false,
  }));
  const plot = el('div', { class: 'chart-plot' });
  const tooltip = el('div', { class: 'tooltip', hidden: true });
  const legend = el('div', { class: 'legend chart-legend' });
  mount.replaceChildren(el('div', { class: 'chart' }, plot, tooltip), legend);
  const span = end - start;
  const x = (ms) => PAD.left + ((ms - start) / span) * (W - PAD.left - PAD.right);
  let scale = { min: 0, max: 1 };
  const y = (v) => PAD.top + (1 - (v - scale.min) / (scale.max - scale.min)) * (H - PAD.top - PAD.bottom);

  function draw() {
    const shown = series.filter((s) => !s.hidden);
    const values = shown.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
    const low = Math.min(0, ...values);
    scale = { min: low < 0 ? -niceMax(-low) : 0, max: niceMax(Math.max(0, ...values)) };
    const grid = [];
    for (let i = 0; i <= 4; i++) {
      const v = scale.min + ((scale.max - scale.min) * i) / 4;
      grid.push(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid' }),
        svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick', text: formatValue(v) }));
    }
    for (let i = 0; i <= 5; i++) {
      const t = start + (span * i) / 5;
      grid.push(svg('text', { x: x(t), y: H - 6, 'text-anchor': i === 0 ? 'start' : i === 5 ? 'end' : 'middle', class: 'tick', text: shortTime(t, span) }));
    }
    const lines = shown.map((s) => {
      // A gap in the samples (no value at a step) breaks the line, as in Grafana.
      const path = s.points.map(([t, v], i) => `${i && t - s.points[i - 1][0] <= step(s) * 1.5 ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join('');
      return svg('path', { d: path, stroke: s.color, class: 'series', 'data-name': s.name });
    });
    const rule = svg('line', { y1: PAD.top, y2: H - PAD.bottom, class: 'rule', visibility: 'hidden' });
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart-svg', role: 'img', 'aria-label': 'metric chart' }, grid, lines, rule);
    chart.addEventListener('mousemove', (event) => hover(event, chart, rule, shown));
    chart.addEventListener('mouseleave', () => {
      tooltip.hidden = true;
      rule.setAttribute('visibility', 'hidden');
    });
    plot.replaceChildren(chart);
    legend.replaceChildren(...series.map((s) => el('button', {
      class: `legend-item series-toggle${s.hidden ? ' off' : ''}`, 'aria-pressed': String(!s.hidden),
      title: 'Click: show or hide this series',
      onclick: () => {
        s.hidden = !s.hidden;
        draw();
      },
    }, el('i', { style: `background:${s.color}` }), s.name)));
  }

  const steps = new Map();
  function step(s) {
    if (!steps.has(s)) {
      let smallest = Infinity;
      for (let i = 1; i < s.points.length; i++) smallest = Math.min(smallest, s.points[i][0] - s.points[i - 1][0]);
      steps.set(s, smallest);
    }
    return steps.get(s);
  }

  function hover(event, chart, rule, shown) {
    const box = chart.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * W;
    const at = start + ((px - PAD.left) / (W - PAD.left - PAD.right)) * span;
    const rows = [];
    let nearest = null;
    for (const s of shown) {
      let best = null;
      for (const point of s.points) if (!best || Math.abs(point[0] - at) < Math.abs(best[0] - at)) best = point;
      if (!best) continue;
      nearest ??= best[0];
      rows.push(el('div', {}, el('i', { style: `background:${s.color}` }), `${s.name}: `, el('b', {}, formatValue(best[1]))));
    }
    if (nearest === null) return;
    rule.setAttribute('x1', x(nearest));
    rule.setAttribute('x2', x(nearest));
    rule.setAttribute('visibility', 'visible');
    tooltip.replaceChildren(el('div', { class: 'small' }, formatTime(nearest, false)), ...rows.slice(0, 20));
    tooltip.hidden = false;
    const left = event.clientX - box.left + 12;
    tooltip.style.left = `${Math.min(left, box.width - 260)}px`;
    tooltip.style.top = `${event.clientY - box.top + 12}px`;
  }

  draw();
}

// An instant query's vector (or scalar) as a table.
export function renderVector(mount, data) {
  const rows = data.resultType === 'scalar' ? [{ metric: {}, value: data.result }] : data.result;
  const table = el('table', { class: 'grid-table vector-table' },
    el('thead', {}, el('tr', {}, el('th', { text: 'series' }), el('th', { text: 'value' }))),
    el('tbody', {}, rows.map((r) => el('tr', {}, el('td', { text: labelsText(r.metric) }),
      el('td', { class: 'num', text: r.value[1] })))));
  mount.replaceChildren(rows.length ? table : el('p', { class: 'empty', text: 'No series.' }));
}
