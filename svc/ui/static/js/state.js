// The whole view state lives in the URL's query string, so that a view can be shared.

const DEFAULTS = {
  tab: 'explore', tenant: '', from: 'now-1h', to: 'now', q: '', type: 'range',
  limit: '1000', tail: '', sql: '',
};

export const state = { ...DEFAULTS };

export function readURL() {
  const params = new URLSearchParams(location.search);
  for (const key of Object.keys(DEFAULTS)) state[key] = params.get(key) ?? DEFAULTS[key];
  if (!params.has('tenant')) state.tenant = localStorage.getItem('svc.tenant') || '';
}

// Write the state to the URL: a new history entry when `push` (a query run), else in place.
export function writeURL(push = false) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) {
    if (value !== DEFAULTS[key]) params.set(key, value);
  }
  const text = params.toString();
  const url = location.pathname + (text ? '?' + text : '');
  if (url === location.pathname + location.search) return;
  history[push ? 'pushState' : 'replaceState'](null, '', url);
}

export function set(changes, push = false) {
  Object.assign(state, changes);
  if ('tenant' in changes) localStorage.setItem('svc.tenant', state.tenant);
  writeURL(push);
}
