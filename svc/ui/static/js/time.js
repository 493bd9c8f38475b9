// Time ranges: relative ("now-15m") or absolute (ISO 8601, Unix seconds/ms/ns).

const UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5 };

export function parseTime(text, now = Date.now()) {
  const value = text.trim();
  const relative = /^now(?:\s*-\s*(\d+)([smhdw]))?$/.exec(value);
  if (relative) return relative[1] ? now - Number(relative[1]) * UNIT_MS[relative[2]] : now;
  if (/^\d+$/.test(value)) {
    if (value.length > 16) return Number(value.slice(0, -6));
    return Number(value) * (value.length > 11 ? 1 : 1000);
  }
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new Error(`invalid time "${text}": use now, now-15m or a date such as 2026-01-02T15:04:05Z`);
  return parsed;
}

// {start, end} in milliseconds.
export function timeRange(from, to) {
  const now = Date.now();
  const start = parseTime(from, now);
  const end = parseTime(to, now);
  if (end <= start) throw new Error('the end of the time range must be after its start');
  return { start, end };
}

export const nsOf = (ms) => (BigInt(Math.round(ms)) * 1000000n).toString();

// Milliseconds of a nanosecond timestamp string.
export const msOf = (ns) => (ns.length > 6 ? Number(ns.slice(0, -6)) : 0);

const pad = (n, width = 2) => String(n).padStart(width, '0');

export function formatTime(ms, withMs = true) {
  const d = new Date(ms);
  const text = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withMs ? `${text}.${pad(d.getMilliseconds(), 3)}` : text;
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
  43200, 86400, 172800, 604800];

// A round step (seconds) giving about `buckets` points over `spanMs`.
export function niceStep(spanMs, buckets) {
  const wanted = spanMs / 1000 / buckets;
  return STEPS.find((step) => step >= wanted) ?? Math.ceil(wanted / 86400) * 86400;
}

export function shortTime(ms, spanMs) {
  const d = new Date(ms);
  if (spanMs > 2 * 864e5) return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (spanMs > 600e3) return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
