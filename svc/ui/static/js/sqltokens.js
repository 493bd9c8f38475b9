// Tokens of SQL text for highlighting in the SQL console.

const KEYWORDS = new Set(('select from where group by order having limit offset with as and or not '
  + 'in is null like ilike between case when then else end join left right inner outer full on '
  + 'using union all distinct asc desc qualify over partition window describe summarize explain '
  + 'analyze values cast true false interval').split(' '));

const TOKEN = /('(?:[^']|'')*'?)|(--[^\n]*)|("(?:[^"]|"")*"?)|(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(\s+)|([\s\S])/gy;

export function tokenizeSQL(text) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  let match;
  while (TOKEN.lastIndex < text.length && (match = TOKEN.exec(text))) {
    let type = ['', 'string', 'comment', 'label', 'number', 'ident', 'space', 'punct'][
      match.findIndex((group, i) => i > 0 && group !== undefined)];
    if (type === 'ident') type = KEYWORDS.has(match[0].toLowerCase()) ? 'keyword' : 'label';
    tokens.push({ type, text: match[0], start: match.index });
  }
  return tokens;
}
