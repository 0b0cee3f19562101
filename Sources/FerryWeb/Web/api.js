// The JSON API of `ferry serve`. On a one-connection source (a card) a request that takes a while
// shows "waiting for the card": it waits for the card's only connection.
import { $ } from './util.js';

let pending = 0;
let waitingTimer = 0;
let single = false;

export function setSingleConnection(value) { single = value; }

function begin() {
  pending++;
  if (single && !waitingTimer) {
    waitingTimer = setTimeout(() => { if (pending > 0) $('waiting').hidden = false; }, 300);
  }
}

function end() {
  pending = Math.max(0, pending - 1);
  if (pending === 0) {
    clearTimeout(waitingTimer);
    waitingTimer = 0;
    $('waiting').hidden = true;
  }
}

/** Runs `fetch` with the waiting indicator. */
export async function tracked(url, init) {
  begin();
  try {
    return await fetch(url, init);
  } finally {
    end();
  }
}

export function apiURL(name, params) {
  const query = new URLSearchParams(params || {});
  return `/api/${name}?${query}`;
}

/** GET (no body) or POST JSON; resolves to the answer's JSON, throws an Error with the server's text. */
export async function api(name, { params, body, quiet } = {}) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  };
  const response = await (quiet ? fetch(apiURL(name, params), init) : tracked(apiURL(name, params), init));
  let data = null;
  try { data = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    const error = new Error((data && data.error) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    error.data = data;
    throw error;
  }
  return data;
}

export function version(entry) {
  return `${entry.size ?? ''}-${entry.modified ?? ''}`;
}

export function fileURL(entry, download) {
  const params = { path: entry.path, v: version(entry) };
  if (download) params.download = '1';
  return apiURL('file', params);
}

export function thumbURL(entry) {
  return apiURL('thumb', { path: entry.path, v: version(entry) });
}
