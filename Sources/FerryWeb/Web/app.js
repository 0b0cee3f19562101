// Ferry's browser UI: folder list and image viewer over the JSON API of
// `ferry serve`. Plain JavaScript, no build step, no third-party code.
'use strict';

const $ = (id) => document.getElementById(id);

/** What tests and automation can read: timings and the images the viewer showed. */
const ferry = (window.ferry = { timings: {}, shown: [] });

const state = {
  source: null,        // /api/source answer
  folder: null,        // current folder path
  entries: [],         // entries of the current folder, as the API sent them
  sort: 'name',
  descending: false,
  listToken: 0,        // guards against a slow listing arriving after a newer one
};

// ---------------------------------------------------------------- API

function apiURL(name, params) {
  const query = new URLSearchParams(params || {});
  return `/api/${name}?${query}`;
}

async function api(name, { params, body } = {}) {
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
    throw error;
  }
  return data;
}

function fileURL(entry, download) {
  const params = { path: entry.path, v: version(entry) };
  if (download) params.download = '1';
  return apiURL('file', params);
}

function version(entry) {
  return `${entry.size ?? ''}-${entry.modified ?? ''}`;
}

// ---------------------------------------------------------------- helpers

function joinPath(folder, name) {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

function parentPath(path) {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function formatSize(n) {
  if (n == null) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return i === 0 ? `${n} B` : `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

// One formatter and one collator for all entries: making them per call costs more than the rest of a render.
const dateOptions = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' };
const localDates = new Intl.DateTimeFormat(undefined, dateOptions);
const floatingDates = new Intl.DateTimeFormat(undefined, { ...dateOptions, timeZone: 'UTC' });
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function formatDate(iso) {
  if (!iso) return '';
  // Floating times (no Z) are the source's local time: show them as they are.
  const utc = iso.endsWith('Z');
  const d = new Date(utc ? iso : iso + 'Z');
  if (Number.isNaN(d.getTime())) return iso;
  return (utc ? localDates : floatingDates).format(d);
}

function element(tag, props, ...children) {
  const e = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'text') e.textContent = v;
      else if (k in e && typeof v !== 'string') e[k] = v;
      else e.setAttribute(k, v);
    }
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

let messageTimer = 0;
function showMessage(text, kind) {
  const m = $('message');
  m.textContent = text;
  m.className = kind === 'info' ? 'info' : '';
  m.hidden = false;
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => { m.hidden = true; }, kind === 'info' ? 3000 : 8000);
}

function showPage(id) {
  for (const page of ['connect', 'locked', 'browser']) $(page).hidden = page !== id;
}

// ---------------------------------------------------------------- dialog

/** Asks for text (`input` given) or a confirmation; resolves to the text, true, or null. */
function ask(text, { input, ok = 'OK', danger = false } = {}) {
  const dialog = $('dialog');
  $('dialog-text').textContent = text;
  const field = $('dialog-input');
  field.hidden = input === undefined;
  field.value = input ?? '';
  $('dialog-ok').textContent = ok;
  $('dialog-ok').classList.toggle('danger', danger);
  return new Promise((resolve) => {
    dialog.onclose = () => {
      if (dialog.returnValue !== 'ok') resolve(null);
      else resolve(input === undefined ? true : field.value.trim());
    };
    dialog.returnValue = '';
    dialog.showModal();
    if (input !== undefined) {
      field.focus();
      const dot = field.value.lastIndexOf('.');
      field.setSelectionRange(0, dot > 0 ? dot : field.value.length);
    }
  });
}

// ---------------------------------------------------------------- start

async function start() {
  bindBrowser();
  bindViewer();
  // Ask for the folder in the address while asking what the source is: one round trip less.
  const early = api('list', { params: { path: new URLSearchParams(location.search).get('path') || '/' } });
  early.catch(() => { /* answered again, with its error shown, by showFolder */ });
  let source;
  try {
    source = await api('source');
  } catch (error) {
    if (error.status === 401 || error.status === 403) {
      $('locked-text').textContent = error.message;
      showPage('locked');
      return;
    }
    showPage('connect');
    $('connect-error').textContent = error.message;
    return;
  }
  state.source = source;
  if (!source.connected) {
    showConnect();
    return;
  }
  enterSource(source);
  await applyLocation(false, early);
}

function showConnect() {
  showPage('connect');
  document.title = 'Ferry';
  $('connect-form').onsubmit = async (event) => {
    event.preventDefault();
    $('connect-error').textContent = '';
    const url = $('connect-url').value.trim();
    if (!url) return;
    try {
      const source = await api('connect', { body: { url } });
      state.source = source;
      enterSource(source);
      history.pushState({ path: '/' }, '', '/?path=%2F');
      await showFolder('/', { history: 'none' });
    } catch (error) {
      $('connect-error').textContent = error.message;
    }
  };
}

function enterSource(source) {
  showPage('browser');
  const can = source.capabilities || {};
  $('upload-button').hidden = !can.upload;
  $('new-folder').hidden = !can.mkdir;
  $('change-source').hidden = !source.canConnect;
}

/** Shows what the address bar names: `?path=FOLDER&image=NAME`. */
async function applyLocation(fromHistory, early) {
  const params = new URLSearchParams(location.search);
  const path = params.get('path') || '/';
  const image = params.get('image');
  if (path !== state.folder || !fromHistory) {
    const ok = await showFolder(path, { history: 'none', listing: early });
    if (!ok) return;
  }
  if (image) {
    const entry = state.entries.find((e) => e.name === image);
    if (entry) openViewer(entry, { history: 'none' });
  } else if (viewer.open) {
    closeViewer({ history: 'none' });
  }
}

window.addEventListener('popstate', () => {
  if (state.source && state.source.connected) applyLocation(true);
});

// ---------------------------------------------------------------- folder list

function folderURL(path, image) {
  const params = new URLSearchParams({ path });
  if (image) params.set('image', image);
  return `/?${params}`;
}

/**
 * Lists `path` and renders it; `history` is 'push', 'replace' or 'none'; `listing`, a listing
 * already asked for. Resolves to false on failure.
 */
async function showFolder(path, { history: mode = 'push', listing: asked } = {}) {
  const token = ++state.listToken;
  const started = performance.now();
  let listing;
  try {
    listing = await (asked || api('list', { params: { path } }));
  } catch (error) {
    if (token !== state.listToken) return false;
    showMessage(error.message);
    if (state.folder === null && path !== '/') return showFolder('/', { history: 'replace' });
    return false;
  }
  if (token !== state.listToken) return false;
  state.folder = listing.path;
  state.entries = listing.entries;
  if (mode === 'push') history.pushState({ path: listing.path }, '', folderURL(listing.path));
  else if (mode === 'replace') history.replaceState({ path: listing.path }, '', folderURL(listing.path));
  const fetched = performance.now();
  renderFolder();
  const rendered = performance.now();
  const timing = {
    path: listing.path, count: listing.count, fetch: fetched - started, render: rendered - fetched,
    fetchAndRender: rendered - started,
  };
  ferry.timings.list = timing;
  // "On screen" is after the browser has laid out and painted the next frame.
  requestAnimationFrame(() => setTimeout(() => {
    const painted = performance.now();
    timing.painted = painted - started;
    if (token === state.listToken) document.body.dataset.paintedAt = String(Math.round(painted));
  }, 0));
  return true;
}

function sortedEntries() {
  const direction = state.descending ? -1 : 1;
  const byName = (a, b) => collator.compare(a.name, b.name);
  const compare = {
    name: byName,
    date: (a, b) => (a.modified || '').localeCompare(b.modified || '') || byName(a, b),
    size: (a, b) => (a.size ?? -1) - (b.size ?? -1) || byName(a, b),
  }[state.sort];
  return [...state.entries].sort((a, b) => {
    const folderA = a.type === 'directory';
    const folderB = b.type === 'directory';
    if (folderA !== folderB) return folderA ? -1 : 1;  // folders first, whatever the order
    return direction * compare(a, b);
  });
}

function renderFolder() {
  const path = state.folder;
  const name = (state.source && state.source.name) || 'Ferry';
  document.title = path === '/' ? `${name} — Ferry` : `${path.split('/').pop()} — Ferry`;
  // Breadcrumb: its text is the path itself ("/DCIM/100FERRY"); each part opens its folder.
  const crumbs = $('crumbs');
  crumbs.dataset.path = path;
  crumbs.replaceChildren();
  crumbs.append(element('button', { type: 'button', text: '/', title: name, dataset: { path: '/' } }));
  let so = '';
  path.split('/').filter(Boolean).forEach((part, i) => {
    so += '/' + part;
    if (i > 0) crumbs.append(element('span', { class: 'sep', text: '/' }));
    crumbs.append(element('button', { type: 'button', text: part, dataset: { path: so } }));
  });
  $('up').disabled = path === '/';
  const count = state.entries.length;
  $('count').dataset.count = String(count);
  $('count').textContent = `${count} item${count === 1 ? '' : 's'}`;
  $('sort').value = state.sort;
  $('sort-direction').innerHTML = state.descending ? '&#8593;' : '&#8595;';

  const can = (state.source && state.source.capabilities) || {};
  const list = $('entries');
  const fragment = document.createDocumentFragment();
  for (const entry of sortedEntries()) fragment.append(renderEntry(entry, can));
  thumbnails.disconnect();
  list.replaceChildren(fragment);
  for (const img of list.querySelectorAll('img[data-src]')) thumbnails.observe(img);
  $('empty').hidden = count > 0;
}

const FOLDER_ICON = '<svg viewBox="0 0 24 24" width="56" height="56" aria-hidden="true">' +
  '<path fill="currentColor" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/></svg>';
const FILE_ICON = '<svg viewBox="0 0 24 24" width="48" height="48" aria-hidden="true">' +
  '<path fill="currentColor" d="M6 2h8l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm7 1.5V8h4.5z"/></svg>';

function renderEntry(entry, can) {
  const isFolder = entry.type === 'directory';
  let thumb;
  if (entry.thumbnail || entry.image) {
    const src = entry.thumbnail ? apiURL('thumb', { path: entry.path, v: version(entry) }) : fileURL(entry);
    thumb = element('span', { class: 'thumb' },
      element('img', { alt: '', loading: 'lazy', decoding: 'async', dataset: { src } }));
  } else {
    thumb = element('span', { class: 'thumb' });
    thumb.innerHTML = isFolder ? FOLDER_ICON : FILE_ICON;  // constant markup
  }
  const meta = isFolder ? 'Folder' : [formatSize(entry.size), formatDate(entry.modified)].filter(Boolean).join(' · ');
  const open = element('button', { class: 'open', type: 'button', title: entry.name },
    thumb, element('span', { class: 'name', text: entry.name }), element('span', { class: 'meta', text: meta }));
  const actions = element('span', { class: 'actions' });
  if (!isFolder) {
    actions.append(element('a', {
      class: 'button', href: fileURL(entry, true), download: entry.name, text: 'Download',
      dataset: { testid: 'download' },
    }));
  }
  if (can.rename) actions.append(element('button', { type: 'button', text: 'Rename', dataset: { testid: 'rename', action: 'rename' } }));
  if (can.delete) actions.append(element('button', { type: 'button', text: 'Delete', dataset: { testid: 'delete', action: 'delete' } }));
  return element('li', {
    class: 'entry', dataset: { testid: 'entry', name: entry.name, type: isFolder ? 'directory' : 'file', path: entry.path },
  }, open, actions);
}

/** Thumbnails load when they scroll near the window, so a folder of 1,000 photos opens at once. */
const thumbnails = 'IntersectionObserver' in window
  ? new IntersectionObserver((items, observer) => {
    for (const item of items) {
      if (!item.isIntersecting) continue;
      const img = item.target;
      img.src = img.dataset.src;
      img.removeAttribute('data-src');
      img.onerror = () => { img.remove(); };
      observer.unobserve(img);
    }
  }, { rootMargin: '300px' })
  : { observe: (img) => { img.src = img.dataset.src; }, disconnect() {} };

function entryOf(node) {
  const li = node.closest('li.entry');
  return li && state.entries.find((e) => e.path === li.dataset.path);
}

function bindBrowser() {
  $('up').onclick = () => { if (state.folder && state.folder !== '/') showFolder(parentPath(state.folder)); };
  $('crumbs').onclick = (event) => {
    const button = event.target.closest('button');
    if (button && button.dataset.path !== state.folder) showFolder(button.dataset.path);
  };
  $('sort').onchange = () => { state.sort = $('sort').value; renderFolder(); };
  $('sort-direction').onclick = () => { state.descending = !state.descending; renderFolder(); };
  $('change-source').onclick = () => { showConnect(); };
  $('entries').onclick = async (event) => {
    const entry = entryOf(event.target);
    if (!entry) return;
    const action = event.target.closest('[data-action]');
    if (action) {
      if (action.dataset.action === 'delete') await deleteEntry(entry);
      else if (action.dataset.action === 'rename') await renameEntry(entry);
      return;
    }
    if (!event.target.closest('.open')) return;
    if (entry.type === 'directory') showFolder(entry.path);
    else if (entry.image) openViewer(entry);
    else location.assign(fileURL(entry, true));
  };
  $('new-folder').onclick = makeFolder;
  $('upload-input').onchange = () => {
    uploadFiles([...$('upload-input').files]);
    $('upload-input').value = '';
  };
  const drop = $('drop');
  let depth = 0;
  const canDrop = (event) => state.source && state.source.capabilities && state.source.capabilities.upload &&
    event.dataTransfer && [...event.dataTransfer.types].includes('Files');
  drop.addEventListener('dragenter', (event) => {
    if (!canDrop(event)) return;
    event.preventDefault();
    depth++;
    drop.classList.add('dragging');
  });
  drop.addEventListener('dragover', (event) => { if (canDrop(event)) event.preventDefault(); });
  drop.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; drop.classList.remove('dragging'); } });
  drop.addEventListener('drop', (event) => {
    depth = 0;
    drop.classList.remove('dragging');
    if (!canDrop(event)) return;
    event.preventDefault();
    uploadFiles([...event.dataTransfer.files]);
  });
  document.addEventListener('keydown', (event) => {
    if (viewer.open || $('dialog').open || $('browser').hidden) return;
    if (event.key === 'Backspace' && !/^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName)) {
      event.preventDefault();
      $('up').click();
    }
  });
}

async function reloadFolder() {
  if (state.folder !== null) await showFolder(state.folder, { history: 'none' });
}

async function makeFolder() {
  const name = await ask('New folder name', { input: '', ok: 'Create' });
  if (!name) return;
  try {
    await api('mkdir', { body: { path: joinPath(state.folder, name) } });
    await reloadFolder();
  } catch (error) {
    showMessage(error.message);
  }
}

async function deleteEntry(entry) {
  const what = entry.type === 'directory' ? 'the folder' : '';
  const yes = await ask(`Delete ${what} “${entry.name}”? This cannot be undone.`, { ok: 'Delete', danger: true });
  if (!yes) return;
  try {
    await api('delete', { body: { path: entry.path } });
    await reloadFolder();
  } catch (error) {
    showMessage(error.message);
  }
}

async function renameEntry(entry) {
  const name = await ask(`Rename “${entry.name}” to`, { input: entry.name, ok: 'Rename' });
  if (!name || name === entry.name) return;
  try {
    await api('rename', { body: { path: entry.path, name } });
    await reloadFolder();
  } catch (error) {
    showMessage(error.message);
  }
}

// ---------------------------------------------------------------- upload

let reloadTimer = 0;

function uploadFiles(files) {
  const folder = state.folder;
  for (const file of files) uploadOne(file, folder, false);
}

function uploadOne(file, folder, overwrite) {
  const progress = element('progress', { max: 1, value: 0, dataset: { testid: 'upload-progress' } });
  const status = element('span', { class: 'status', text: 'uploading' });
  const cancel = element('button', { type: 'button', text: 'Cancel', dataset: { testid: 'upload-cancel' } });
  const row = element('li', { dataset: { testid: 'upload-item', name: file.name, state: 'running' } },
    element('span', { class: 'name', text: file.name }), progress, status, cancel);
  $('uploads').append(row);
  const xhr = new XMLHttpRequest();
  const finish = (kind, text) => {
    row.dataset.state = kind;
    status.textContent = text;
    cancel.textContent = 'Dismiss';
    cancel.onclick = () => row.remove();
    if (kind === 'done') setTimeout(() => row.remove(), 4000);
  };
  cancel.onclick = () => xhr.abort();
  xhr.upload.onprogress = (event) => {
    if (event.lengthComputable) {
      progress.value = event.loaded / event.total;
      status.textContent = `${Math.round(progress.value * 100)}%`;
    }
  };
  xhr.onload = async () => {
    if (xhr.status === 201) {
      progress.value = 1;
      finish('done', 'done');
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(() => { if (state.folder === folder) reloadFolder(); }, 150);
      return;
    }
    let text = `${xhr.status}`;
    try { text = JSON.parse(xhr.responseText).error || text; } catch (_) { /* not JSON */ }
    if (xhr.status === 409 && !overwrite) {
      row.remove();
      const yes = await ask(`“${file.name}” exists in ${folder}. Replace it?`, { ok: 'Replace', danger: true });
      if (yes) uploadOne(file, folder, true);
      return;
    }
    finish('failed', text);
  };
  xhr.onerror = () => finish('failed', 'connection failed');
  xhr.onabort = () => finish('cancelled', 'cancelled');
  const form = new FormData();
  form.append('file', file, file.name);
  const params = { path: folder };
  if (overwrite) params.overwrite = '1';
  xhr.open('POST', apiURL('upload', params));
  xhr.send(form);
}

// ---------------------------------------------------------------- viewer

const viewer = {
  open: false,
  entry: null,
  token: 0,            // one per open: a late answer for an image left behind is dropped
  abort: null,
  objectURL: null,
  pushed: false,       // whether opening pushed a history entry (closing then goes back)
  width: 0, height: 0, // natural size of the shown image
  zoom: 1, x: 0, y: 0,
  pointers: new Map(),
  gesture: null,
};

const MAX_ZOOM = 4;

function images() {
  return sortedEntries().filter((e) => e.image);
}

function openViewer(entry, { history: mode = 'push' } = {}) {
  const wasOpen = viewer.open;
  viewer.open = true;
  $('viewer').hidden = false;
  if (mode === 'push' && !wasOpen) {
    history.pushState({ path: state.folder, image: entry.name }, '', folderURL(state.folder, entry.name));
    viewer.pushed = true;
  } else if (mode === 'push' || mode === 'replace') {
    history.replaceState({ path: state.folder, image: entry.name }, '', folderURL(state.folder, entry.name));
  }
  loadImage(entry);
}

function loadImage(entry) {
  const token = ++viewer.token;
  viewer.entry = entry;
  if (viewer.abort) viewer.abort.abort();
  const controller = new AbortController();
  viewer.abort = controller;
  const v = $('viewer');
  v.classList.add('loading');
  v.dataset.name = entry.name;
  v.dataset.loaded = 'false';
  $('spinner').hidden = false;
  $('viewer-error').hidden = true;
  $('viewer-title').textContent = entry.name;
  document.title = `${entry.name} — Ferry`;
  $('viewer-download').href = fileURL(entry, true);
  $('viewer-download').setAttribute('download', entry.name);
  const list = images();
  const index = list.findIndex((e) => e.path === entry.path);
  $('prev').disabled = index <= 0;
  $('next').disabled = index < 0 || index >= list.length - 1;

  (async () => {
    const response = await fetch(fileURL(entry), { signal: controller.signal });
    if (!response.ok) {
      let text = `${response.status} ${response.statusText}`;
      try { text = (await response.json()).error || text; } catch (_) { /* not JSON */ }
      throw new Error(text);
    }
    const blob = await response.blob();
    if (token !== viewer.token) return;
    const url = URL.createObjectURL(blob);
    const probe = new Image();
    probe.src = url;
    await probe.decode();
    if (token !== viewer.token) { URL.revokeObjectURL(url); return; }
    const img = $('viewer-image');
    img.src = url;
    img.alt = entry.name;
    img.dataset.name = entry.name;
    if (viewer.objectURL) URL.revokeObjectURL(viewer.objectURL);
    viewer.objectURL = url;
    viewer.width = probe.naturalWidth;
    viewer.height = probe.naturalHeight;
    img.style.width = `${viewer.width}px`;
    img.style.height = `${viewer.height}px`;
    fit();
    $('spinner').hidden = true;
    v.classList.remove('loading');
    v.dataset.loaded = 'true';
    ferry.shown.push(entry.name);
  })().catch((error) => {
    if (token !== viewer.token || error.name === 'AbortError') return;
    $('spinner').hidden = true;
    $('viewer-error').textContent = `Cannot show ${entry.name}: ${error.message}`;
    $('viewer-error').hidden = false;
  });
}

function closeViewer({ history: mode = 'auto' } = {}) {
  if (!viewer.open) return;
  if (mode === 'auto') {
    if (viewer.pushed) {
      history.back();  // popstate closes the viewer
      return;
    }
    history.replaceState({ path: state.folder }, '', folderURL(state.folder));
  }
  viewer.open = false;
  viewer.pushed = false;
  viewer.token++;
  if (viewer.abort) viewer.abort.abort();
  $('viewer').hidden = true;
  const img = $('viewer-image');
  img.removeAttribute('src');
  img.dataset.name = '';
  if (viewer.objectURL) URL.revokeObjectURL(viewer.objectURL);
  viewer.objectURL = null;
  renderFolderTitle();
}

function renderFolderTitle() {
  const path = state.folder || '/';
  const name = (state.source && state.source.name) || 'Ferry';
  document.title = path === '/' ? `${name} — Ferry` : `${path.split('/').pop()} — Ferry`;
}

function step(delta) {
  if (!viewer.entry) return;
  const list = images();
  const index = list.findIndex((e) => e.path === viewer.entry.path);
  const next = list[index + delta];
  if (index < 0 || !next) return;
  openViewer(next, { history: 'replace' });
}

// Zoom and pan: the image is placed with translate(x, y) scale(zoom), origin top left.

function stageSize() {
  const stage = $('stage');
  return { w: stage.clientWidth, h: stage.clientHeight };
}

function fitZoom() {
  if (!viewer.width) return 1;
  const { w, h } = stageSize();
  return Math.min(1, w / viewer.width, h / viewer.height);
}

function zoomBounds() {
  const fitted = fitZoom();
  return { min: Math.min(0.2, fitted), max: Math.max(MAX_ZOOM, fitted) };
}

function fit() {
  const zoom = fitZoom();
  const { w, h } = stageSize();
  viewer.zoom = zoom;
  viewer.x = (w - viewer.width * zoom) / 2;
  viewer.y = (h - viewer.height * zoom) / 2;
  applyTransform();
}

/** Zooms to `zoom` keeping the stage point (cx, cy) where it is. */
function zoomTo(zoom, cx, cy) {
  if (!viewer.width) return;
  const { min, max } = zoomBounds();
  const z = Math.min(max, Math.max(min, zoom));
  if (cx === undefined) {
    const { w, h } = stageSize();
    cx = w / 2;
    cy = h / 2;
  }
  const ix = (cx - viewer.x) / viewer.zoom;
  const iy = (cy - viewer.y) / viewer.zoom;
  viewer.zoom = z;
  viewer.x = cx - ix * z;
  viewer.y = cy - iy * z;
  applyTransform();
}

function panBy(dx, dy) {
  viewer.x += dx;
  viewer.y += dy;
  applyTransform();
}

/** Keeps the image on screen: centred along an axis where it is smaller than the stage, else covering it. */
function clampPan() {
  const { w, h } = stageSize();
  const iw = viewer.width * viewer.zoom;
  const ih = viewer.height * viewer.zoom;
  viewer.x = iw <= w ? (w - iw) / 2 : Math.min(0, Math.max(w - iw, viewer.x));
  viewer.y = ih <= h ? (h - ih) / 2 : Math.min(0, Math.max(h - ih, viewer.y));
}

function applyTransform() {
  clampPan();
  const img = $('viewer-image');
  img.style.transform = `translate(${viewer.x}px, ${viewer.y}px) scale(${viewer.zoom})`;
  const v = $('viewer');
  const { min, max } = zoomBounds();
  v.dataset.zoom = String(Math.round(viewer.zoom * 10000) / 10000);
  v.dataset.zoomMin = String(Math.round(min * 10000) / 10000);
  v.dataset.zoomMax = String(max);
  v.dataset.fit = String(Math.round(fitZoom() * 10000) / 10000);
  v.dataset.panX = String(Math.round(viewer.x));
  v.dataset.panY = String(Math.round(viewer.y));
  $('zoom-level').textContent = `${Math.round(viewer.zoom * 100)}%`;
  $('zoom-in').disabled = viewer.zoom >= max - 1e-6;
  $('zoom-out').disabled = viewer.zoom <= min + 1e-6;
}

function stagePoint(event) {
  const r = $('stage').getBoundingClientRect();
  return { x: event.clientX - r.left, y: event.clientY - r.top };
}

function bindViewer() {
  const stage = $('stage');
  $('close').onclick = () => closeViewer();
  $('prev').onclick = () => step(-1);
  $('next').onclick = () => step(1);
  $('zoom-in').onclick = () => zoomTo(viewer.zoom * 1.25);
  $('zoom-out').onclick = () => zoomTo(viewer.zoom / 1.25);
  $('zoom-fit').onclick = () => fit();
  stage.addEventListener('wheel', (event) => {
    event.preventDefault();
    const p = stagePoint(event);
    const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    zoomTo(viewer.zoom * Math.exp(-delta * 0.0015), p.x, p.y);
  }, { passive: false });
  stage.addEventListener('dblclick', (event) => {
    const p = stagePoint(event);
    if (Math.abs(viewer.zoom - fitZoom()) < 0.01) zoomTo(1, p.x, p.y);
    else fit();
  });
  stage.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 && event.pointerType === 'mouse') return;
    stage.setPointerCapture(event.pointerId);
    viewer.pointers.set(event.pointerId, stagePoint(event));
    stage.classList.add('dragging');
    if (viewer.pointers.size === 1) {
      const p = stagePoint(event);
      viewer.gesture = { startX: p.x, startY: p.y, time: performance.now(), zoomAtStart: viewer.zoom, pinched: false };
    } else if (viewer.pointers.size === 2) {
      const [a, b] = [...viewer.pointers.values()];
      viewer.gesture = { ...(viewer.gesture || {}), pinched: true, distance: Math.hypot(a.x - b.x, a.y - b.y), zoom: viewer.zoom };
    }
  });
  stage.addEventListener('pointermove', (event) => {
    if (!viewer.pointers.has(event.pointerId)) return;
    const previous = viewer.pointers.get(event.pointerId);
    const p = stagePoint(event);
    viewer.pointers.set(event.pointerId, p);
    if (viewer.pointers.size === 1) {
      panBy(p.x - previous.x, p.y - previous.y);
    } else if (viewer.pointers.size === 2 && viewer.gesture && viewer.gesture.distance) {
      const [a, b] = [...viewer.pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      zoomTo(viewer.gesture.zoom * distance / viewer.gesture.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
    }
  });
  const end = (event) => {
    if (!viewer.pointers.has(event.pointerId)) return;
    viewer.pointers.delete(event.pointerId);
    if (viewer.pointers.size > 0) return;
    stage.classList.remove('dragging');
    const g = viewer.gesture;
    viewer.gesture = null;
    if (!g || g.pinched || event.type === 'pointercancel') return;
    // A quick horizontal swipe on an image that fits the window turns the page.
    const p = stagePoint(event);
    const dx = p.x - g.startX;
    const dy = p.y - g.startY;
    const fitted = g.zoomAtStart <= fitZoom() + 1e-3;
    if (fitted && Math.abs(dx) > 60 && Math.abs(dy) < Math.abs(dx) * 0.6 && performance.now() - g.time < 800) {
      step(dx < 0 ? 1 : -1);
    }
  };
  stage.addEventListener('pointerup', end);
  stage.addEventListener('pointercancel', end);
  window.addEventListener('resize', () => { if (viewer.open && viewer.width) fit(); });
  document.addEventListener('keydown', (event) => {
    if (!viewer.open || $('dialog').open) return;
    switch (event.key) {
      case 'Escape': closeViewer(); break;
      case 'ArrowLeft': step(-1); break;
      case 'ArrowRight': step(1); break;
      case '+': case '=': zoomTo(viewer.zoom * 1.25); break;
      case '-': case '_': zoomTo(viewer.zoom / 1.25); break;
      case '0': fit(); break;
      default: return;
    }
    event.preventDefault();
  });
}

start();
