// LogQL text helpers: tokens for highlighting, and the few edits the UI makes to a query.

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right',
  'bool', 'offset', 'and', 'or', 'unless', 'json', 'logfmt', 'regexp', 'pattern', 'unpack',
  'line_format', 'label_format', 'drop', 'keep', 'decolorize', 'unwrap', 'ip', 'duration',
  'duration_seconds', 'bytes', 'label_replace']);
const FUNCTIONS = new Set(['rate', 'rate_counter', 'count_over_time', 'bytes_rate',
  'bytes_over_time', 'avg_over_time', 'sum_over_time', 'min_over_time', 'max_over_time',
  'stddev_over_time', 'stdvar_over_time', 'quantile_over_time', 'first_over_time',
  'last_over_time', 'absent_over_time', 'sum', 'avg', 'min', 'max', 'count', 'stddev',
  'stdvar', 'topk', 'bottomk', 'sort', 'sort_desc', 'vector', 'approx_topk']);

const TOKEN = new RegExp([
  '("(?:[^"\\\\\\n]|\\\\.)*"?|`[^`]*`?)', // 1 string (possibly unterminated)
  '(#[^\\n]*)', // 2 comment
  '(\\[[^\\]\\s]*\\])', // 3 range
  '(\\d+(?:\\.\\d+)?(?:[a-zA-Zµ]+)?)', // 4 number, duration or bytes
  '([A-Za-z_][A-Za-z0-9_.]*)', // 5 identifier
  '(\\|=|\\|~|\\|>|!=|!~|=~|==|>=|<=|[|=><!+\\-*/%^])', // 6 operator
  '(\\s+)', // 7 space
  '([{}(),])', // 8 punctuation
  '([\\s\\S])', // 9 anything else
].join('|'), 'gy');

const KINDS = [null, 'string', 'comment', 'range', 'number', 'ident', 'op', 'space', 'punct', 'other'];

export function tokenize(text) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  let match;
  while (TOKEN.lastIndex < text.length && (match = TOKEN.exec(text))) {
    const kind = KINDS[match.findIndex((group, i) => i > 0 && group !== undefined)];
    let type = kind;
    if (kind === 'ident') {
      if (FUNCTIONS.has(match[0])) type = 'function';
      else if (KEYWORDS.has(match[0])) type = 'keyword';
      else type = 'label';
    }
    tokens.push({ type, text: match[0], start: match.index });
  }
  return tokens;
}

// A log query starts with its stream selector; a metric query never does.
export const isLogQuery = (query) => query.trim().startsWith('{');

// The offsets of the first stream selector's braces, or null.
function selectorBounds(query) {
  const tokens = tokenize(query);
  const open = tokens.findIndex((t) => t.type === 'punct' && t.text === '{');
  if (open < 0) return null;
  const close = tokens.findIndex((t, i) => i > open && t.type === 'punct' && t.text === '}');
  if (close < 0) return null;
  return { open: tokens[open].start, close: tokens[close].start, tokens: tokens.slice(open + 1, close) };
}

export const quote = (value) => JSON.stringify(value);

// The query with `name op "value"` in its first selector, replacing a matcher on the name.
export function withMatcher(query, name, value, op = '=') {
  const matcher = `${name}${op}${quote(value)}`;
  const bounds = selectorBounds(query);
  if (!bounds) return query.trim() ? query : `{${matcher}}`;
  const inner = bounds.tokens.filter((t) => t.type !== 'space');
  for (let i = 0; i + 2 < inner.length; i++) {
    if (inner[i].type === 'label' && inner[i].text === name && inner[i + 1].type === 'op'
        && inner[i + 2].type === 'string') {
      const end = inner[i + 2].start + inner[i + 2].text.length;
      return query.slice(0, inner[i].start) + matcher + query.slice(end);
    }
  }
  const body = query.slice(bounds.open + 1, bounds.close);
  const joined = body.trim() ? `${body.trimEnd()}, ${matcher}` : matcher;
  return query.slice(0, bounds.open + 1) + joined + query.slice(bounds.close);
}

function unquote(token) {
  if (token.text.startsWith('`')) return token.text.slice(1, -1);
  try {
    return JSON.parse(token.text);
  } catch {
    return token.text.slice(1, -1);
  }
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// One RegExp matching what the query's positive line filters (|= and |~) match, or null.
export function filterRegExp(query) {
  const tokens = tokenize(query).filter((t) => t.type !== 'space' && t.type !== 'comment');
  const parts = [];
  let ignoreCase = false;
  for (let i = 0; i < tokens.length; i++) {
    const op = tokens[i].text;
    if (tokens[i].type !== 'op' || (op !== '|=' && op !== '|~')) continue;
    let j = i + 1;
    while (tokens[j] && tokens[j].type === 'string') {
      const text = unquote(tokens[j]);
      if (op === '|=') {
        if (text) parts.push(escapeRegExp(text));
      } else {
        const caseless = text.startsWith('(?i)');
        ignoreCase ||= caseless;
        const pattern = caseless ? text.slice(4) : text;
        try {
          new RegExp(pattern);
          if (pattern) parts.push(pattern);
        } catch {
          // RE2 syntax JavaScript lacks: no highlighting for this filter.
        }
      }
      if (tokens[j + 1]?.text === 'or') j += 2;
      else break;
    }
  }
  if (!parts.length) return null;
  return new RegExp(parts.map((p) => `(?:${p})`).join('|'), ignoreCase ? 'gi' : 'g');
}

// The 0-based offset of a server error's "line L, col C", or null.
export function errorOffset(query, message) {
  const match = /line (\d+), col (\d+)/.exec(message);
  if (!match) return null;
  const lines = query.split('\n');
  const line = Math.min(Number(match[1]), lines.length) - 1;
  let offset = 0;
  for (let i = 0; i < line; i++) offset += lines[i].length + 1;
  return Math.min(offset + Number(match[2]) - 1, query.length);
}
