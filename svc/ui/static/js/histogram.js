// The log volume histogram: bars stacked by level over the time range.

import { LEVEL_COLORS, el, svg } from './dom.js';
import { formatTime, shortTime } from './time.js';

const LEVEL_ORDER = ['critical', 'fatal', 'error', 'warn', 'info', 'debug', 'trace', 'unknown'];

export function levelOf(labels) {
  const level = (labels.detected_level || labels.level || 'unknown').toLowerCase();
  return level in LEVEL_COLORS ? level : 'unknown';
}

// `matrix`: the series of `sum by (detected_level) (count_over_time(...))`.
export function renderHistogram(mount, matrix, { start, end, stepMs }) {
  const buckets = new Map();
  const levels = new Set();
  for (const series of matrix) {
    const level = levelOf(series.metric);
    levels.add(level);
    for (const [t, v] of series.values) {
      const at = Math.round(t * 1000);
      const bucket = buckets.get(at) || {};
      bucket[level] = (bucket[level] || 0) + Number(v);
      buckets.set(at, bucket);
    }
  }
  const width = 1000;
  const height = 100;
  const span = end - start;
  let max = 0;
  let total = 0;
  for (const bucket of buckets.values()) {
    const sum = Object.values(bucket).reduce((a, b) => a + b, 0);
    max = Math.max(max, sum);
    total += sum;
  }
  const x = (ms) => ((ms - start) / span) * width;
  const barWidth = Math.max((stepMs / span) * width - 1, 1);
  const bars = [];
  for (const [at, bucket] of buckets) {
    let y = height;
    const tip = [formatTime(at, false)];
    for (const level of LEVEL_ORDER) {
      const count = bucket[level];
      if (!count) continue;
      const h = (count / max) * (height - 4);
      y -= h;
      tip.push(`${level}: ${count}`);
      bars.push(svg('rect', {
        x: x(at - stepMs).toFixed(2), y: y.toFixed(2), width: barWidth.toFixed(2),
        height: h.toFixed(2), fill: LEVEL_COLORS[level], class: `bar level-${level}`,
      }, svg('title', { text: tip.join('\n') })));
    }
  }
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', class: 'histogram-svg',
    role: 'img', 'aria-label': `log volume: ${total} lines`,
  }, bars);
  const legend = el('div', { class: 'legend small' },
    LEVEL_ORDER.filter((l) => levels.has(l)).map((l) =>
      el('span', { class: 'legend-item' }, el('i', { style: `background:${LEVEL_COLORS[l]}` }), l)),
    el('span', { class: 'axis' }, `${shortTime(start, span)} – ${shortTime(end, span)}, max ${max} per ${stepMs / 1000}s`));
  mount.replaceChildren(chart, legend);
  return total;
}
