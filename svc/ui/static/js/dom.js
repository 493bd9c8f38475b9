// Small DOM helpers: elements built from data, never from HTML strings.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

// Save a Blob under a file name, as a browser download.
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export const LEVEL_COLORS = {
  critical: '#a01d5c', fatal: '#a01d5c', error: '#e0384b', warn: '#e89a1c',
  info: '#2f9e5a', debug: '#3f7fd8', trace: '#7b68c8', unknown: '#8a8f98',
};

// A stable colour per series index.
const PALETTE = ['#3f7fd8', '#e0384b', '#2f9e5a', '#e89a1c', '#7b68c8', '#17a2b8',
  '#d45fa0', '#8c6d31', '#5a9e2f', '#c0504d', '#4f81bd', '#9bbb59'];
export const seriesColor = (i) => PALETTE[i % PALETTE.length];

export function labelsText(labels) {
  const names = Object.keys(labels).sort();
  return '{' + names.map((n) => `${n}=${JSON.stringify(labels[n])}`).join(', ') + '}';
}
