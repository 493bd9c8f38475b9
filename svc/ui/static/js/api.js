// Calls to svc's public HTTP API, with the tenant as X-Scope-OrgID.

import { state } from './state.js';

export const API = '/svc/api/v1';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function tenantHeaders(headers = {}) {
  return state.tenant ? { 'X-Scope-OrgID': state.tenant, ...headers } : { ...headers };
}

// The server's own message: the text of a plain answer or the error of a JSON one.
async function errorOf(response) {
  const text = (await response.text()).trim();
  try {
    const body = JSON.parse(text);
    return new ApiError(response.status, body.error || body.message || text);
  } catch {
    return new ApiError(response.status, text || response.statusText);
  }
}

export async function call(path, { params = {}, method = 'GET', body, headers, signal } = {}) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, item);
  }
  const response = await fetch(url, { method, body, headers: tenantHeaders(headers), signal });
  if (!response.ok) throw await errorOf(response);
  return response;
}

export async function getJSON(path, options) {
  return (await call(path, options)).json();
}
