// The JSON API of `ferry serve`. On a one-connection source (a card) the page shows "waiting for
// the card" exactly while the server says one of this page's requests waits for the card's
// connection: every request carries this page's id (`page=`), and a long poll of /api/waiting
// follows that state.
import { $ } from './util.js';

/** This tab's id: kept across reloads (sessionStorage), so the browser's cache keeps its URLs. */
export const pageID = (() => {
  const key = 'ferry.page';
  let id = null;
  try { id = sessionStorage.getItem(key); } catch (_) { /* storage off */ }
  if (!id) {
    id = Math.random().toString(36).slice(2, 10) + Date.now().toString(36).slice(-4);
    try { sessionStorage.setItem(key, id); } catch (_) { /* storage off */ }
  }
  return id;
})();

let watching = false;
let poll = null;  // the AbortController of the long poll in flight

/** Starts following the server's word on this page's waiting requests (a card's one connection). */
export function setSingleConnection(value) {
  if (!value || watching) return;
  watching = true;
  followWaiting();
  // A page put aside (another page opened, the back-forward cache) lets its connection go: the
  // browser has six per server, and pages kept aside with a poll each would take them all.
  window.addEventListener('pagehide', () => { if (poll) poll.abort(); });
  window.addEventListener('pageshow', (event) => { if (event.persisted) followWaiting(); });
}

async function followWaiting() {
  if (poll) poll.abort();
  const controller = new AbortController();
  poll = controller;
  let shown = false;
  while (poll === controller) {
    try {
      const response = await fetch(`/api/waiting?page=${encodeURIComponent(pageID)}&shown=${shown ? 1 : 0}`,
        { cache: 'no-store', signal: controller.signal });
      if (!response.ok) throw new Error(String(response.status));
      shown = !!(await response.json()).waiting;
      $('waiting').hidden = !shown;
    } catch (_) {
      shown = false;
      $('waiting').hidden = true;
      if (controller.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** `fetch` of an API URL (the server tells whether it waits for the card). */
export function tracked(url, init) {
  return fetch(url, init);
}

export function apiURL(name, params) {
  const query = new URLSearchParams(params || {});
  query.set('page', pageID);
  return `/api/${name}?${query}`;
}

/** GET (no body) or POST JSON; resolves to the answer's JSON, throws an Error with the server's text. */
export async function api(name, { params, body } = {}) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  };
  const response = await fetch(apiURL(name, params), init);
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

/** A thumbnail's URL; `side` (512) asks for a sharper one than the default 256 pixels. */
export function thumbURL(entry, side) {
  const params = { path: entry.path, v: version(entry) };
  if (side) params.s = String(side);
  return apiURL('thumb', params);
}
