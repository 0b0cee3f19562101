// The folder list: listing, sorting (sort.js), tiles, thumbnails, hidden entries and selection.
import { api, fileURL, thumbURL } from './api.js';
import { $, element, ferry, formatDate, formatSize, parentPath } from './util.js';
import { showMessage, clearMessage } from './messages.js';
import { sortEntries } from './sort.js';
import { state } from './state.js';
import { deleteEntries, renameEntry, makeFolder } from './changes.js';
import { openViewer, viewer } from './viewer.js';
import { renderSelectionBar } from './importer.js';

export function folderURL(path, image) {
  const params = new URLSearchParams({ path });
  if (image) params.set('image', image);
  return `/?${params}`;
}

/** The entries shown: hidden ones only with "Show hidden", in the chosen order. */
export function visibleEntries() {
  const shown = state.showHidden ? state.entries : state.entries.filter((e) => !e.hidden);
  return sortEntries(shown, state.sort, state.descending);
}

/**
 * Lists `path` and renders it; `history` is 'push', 'replace' or 'none'; `listing`, a listing
 * already asked for. Resolves to false on failure.
 */
export async function showFolder(path, { history: mode = 'push', listing: asked, keepMessage = false } = {}) {
  const token = ++state.listToken;
  const started = performance.now();
  let listing;
  try {
    listing = await (asked || api('list', { params: { path } }));
  } catch (error) {
    if (token !== state.listToken) return false;
    showMessage(error.message, { kind: 'list' });
    if (state.folder === null && path !== '/') return showFolder('/', { history: 'replace', keepMessage: true });
    return false;
  }
  if (token !== state.listToken) return false;
  if (!keepMessage) clearMessage('list');
  if (state.folder !== listing.path) {
    state.selected.clear();
    state.anchor = null;
  }
  state.folder = listing.path;
  state.entries = listing.entries;
  const paths = new Set(listing.entries.map((e) => e.path));
  for (const p of [...state.selected]) if (!paths.has(p)) state.selected.delete(p);
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

/**
 * Asks for the folder again and updates what changed in place (imported badges); the list is
 * rebuilt only when entries came or went. Used while an import runs: a rebuild under the
 * person's pointer would swallow clicks.
 */
export async function refreshFolder() {
  if (state.folder === null) return;
  const folder = state.folder;
  let listing;
  try {
    // In the background: it must not pause the import it follows.
    listing = await api('list', { params: { path: folder, background: '1' }, quiet: true });
  } catch (_) {
    return;
  }
  if (state.folder !== folder) return;
  const before = new Map(state.entries.map((e) => [e.path, e]));
  const same = listing.entries.length === state.entries.length && listing.entries.every((e) => before.has(e.path));
  if (!same) {
    await showFolder(folder, { history: 'none', listing: Promise.resolve(listing), keepMessage: true });
    return;
  }
  state.entries = listing.entries;
  for (const li of $('entries').children) {
    const entry = listing.entries.find((e) => e.path === li.dataset.path);
    if (!entry || String(!!entry.imported) === li.dataset.imported) continue;
    li.dataset.imported = String(!!entry.imported);
    li.querySelector('.badge')?.remove();
    if (entry.imported) li.prepend(importedBadge());
  }
}

function importedBadge() {
  return element('span', { class: 'badge', text: 'Imported', dataset: { testid: 'imported-badge' } });
}

export async function reloadFolder() {
  if (state.folder !== null) await showFolder(state.folder, { history: 'none' });
}

export function renderFolder() {
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
  const entries = visibleEntries();
  const count = entries.length;
  const hidden = state.entries.length - entries.length;
  $('count').dataset.count = String(count);
  $('count').textContent = `${count} item${count === 1 ? '' : 's'}` + (hidden > 0 ? ` (${hidden} hidden)` : '');
  $('sort').value = state.sort;
  $('sort-direction').innerHTML = state.descending ? '&#8593;' : '&#8595;';
  $('show-hidden').checked = state.showHidden;

  const can = (state.source && state.source.capabilities) || {};
  const list = $('entries');
  const fragment = document.createDocumentFragment();
  for (const entry of entries) fragment.append(renderEntry(entry, can));
  thumbnails.disconnect();
  list.replaceChildren(fragment);
  // The first screen's thumbnails at once: the observer would first wait for a frame, and on a
  // card every thumbnail waits its turn behind the others. Tiles come in reading order, so the
  // first one below the screen ends it (one layout, no more).
  let below = false;
  for (const img of list.querySelectorAll('img[data-src]')) {
    below = below || img.getBoundingClientRect().top > window.innerHeight + 150;
    if (below) thumbnails.observe(img);
    else loadThumbnail(img);
  }
  $('empty').hidden = count > 0;
  renderSelection();
}

const FOLDER_ICON = '<svg viewBox="0 0 24 24" width="56" height="56" aria-hidden="true">' +
  '<path fill="currentColor" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/></svg>';
const FILE_ICON = '<svg viewBox="0 0 24 24" width="48" height="48" aria-hidden="true">' +
  '<path fill="currentColor" d="M6 2h8l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm7 1.5V8h4.5z"/></svg>';
const VIDEO_ICON = '<svg viewBox="0 0 24 24" width="48" height="48" aria-hidden="true">' +
  '<path fill="currentColor" d="M4 5h11a2 2 0 0 1 2 2v2.5l4-2.5v10l-4-2.5V17a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2z"/></svg>';
const ICONS = {
  download: '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M11 3h2v10l3.5-3.5 1.4 1.4L12 16.8l-5.9-5.9 1.4-1.4L11 13zM4 19h16v2H4z"/></svg>',
  rename: '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M4 17.2V20h2.8l8.3-8.3-2.8-2.8zM19.7 7.3a1 1 0 0 0 0-1.4l-1.6-1.6a1 1 0 0 0-1.4 0l-1.3 1.3 2.8 2.8z"/></svg>',
  delete: '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M9 3h6l1 2h4v2H4V5h4zM6 8h12l-1 13H7z"/></svg>',
};

function iconButton(tag, props, icon) {
  const b = element(tag, props);
  b.innerHTML = ICONS[icon];  // constant markup
  return b;
}

function renderEntry(entry, can) {
  const isFolder = entry.type === 'directory';
  const isFile = !isFolder;
  let thumb;
  if (entry.thumbnail || entry.image) {
    const src = entry.thumbnail ? thumbURL(entry) : fileURL(entry);
    thumb = element('span', { class: 'thumb' },
      element('img', { alt: '', loading: 'lazy', decoding: 'async', dataset: { src } }));
  } else {
    thumb = element('span', { class: 'thumb' });
    thumb.innerHTML = isFolder ? FOLDER_ICON : entry.media === 'video' ? VIDEO_ICON : FILE_ICON;  // constant markup
    if (isFile) {
      const ext = entry.name.includes('.') ? entry.name.split('.').pop().toUpperCase() : 'FILE';
      thumb.append(element('span', { class: 'kind', text: ext.slice(0, 5) }));
    }
  }
  const meta = isFolder ? 'Folder' : [formatSize(entry.size), formatDate(entry.modified)].filter(Boolean).join(' · ');
  const open = element('button', { class: 'open', type: 'button', title: entry.name },
    thumb, element('span', { class: 'name', text: entry.name }), element('span', { class: 'meta', text: meta }));
  const selected = state.selected.has(entry.path);
  const box = isFile ? element('input', {
    type: 'checkbox', class: 'select', checked: selected, title: `Select ${entry.name}`,
    'aria-label': `Select ${entry.name}`, dataset: { testid: 'select' },
  }) : null;
  const badge = entry.imported ? importedBadge() : null;
  const actions = element('span', { class: 'actions' });
  if (isFile) {
    actions.append(iconButton('a', {
      class: 'button icon', href: fileURL(entry, true), download: entry.name, title: `Download ${entry.name}`,
      'aria-label': 'Download', dataset: { testid: 'download' },
    }, 'download'));
  }
  if (can.rename) {
    actions.append(iconButton('button', {
      type: 'button', class: 'icon', title: 'Rename', 'aria-label': 'Rename', dataset: { testid: 'rename', action: 'rename' },
    }, 'rename'));
  }
  if (can.delete && !entry.system) {
    actions.append(iconButton('button', {
      type: 'button', class: 'icon', title: 'Delete', 'aria-label': 'Delete', dataset: { testid: 'delete', action: 'delete' },
    }, 'delete'));
  }
  return element('li', {
    class: 'entry' + (selected ? ' selected' : ''), dataset: {
      testid: 'entry', name: entry.name, type: isFolder ? 'directory' : 'file', path: entry.path,
      imported: String(!!entry.imported), hidden: String(!!entry.hidden), media: entry.media || (entry.image ? 'image' : ''),
    },
  }, box, badge, open, actions);
}

/** Thumbnails load when they scroll near the window, so a folder of 1,000 photos opens at once. */
function loadThumbnail(img) {
  img.src = img.dataset.src;
  img.removeAttribute('data-src');
  img.onerror = () => fileTile(img);
}

const thumbnails = 'IntersectionObserver' in window
  ? new IntersectionObserver((items, observer) => {
    for (const item of items) {
      if (!item.isIntersecting) continue;
      loadThumbnail(item.target);
      observer.unobserve(item.target);
    }
  }, { rootMargin: '150px' })  // a card answers one request at a time: the first screen first
  : { observe: loadThumbnail, disconnect() {} };

/** A thumbnail the server could not make (a raw file without a preview): the file-type tile instead. */
function fileTile(img) {
  const thumb = img.closest('.thumb');
  const name = img.closest('li.entry')?.dataset.name || '';
  img.remove();
  if (!thumb) return;
  thumb.innerHTML = FILE_ICON;  // constant markup
  thumb.append(element('span', { class: 'kind', text: (name.includes('.') ? name.split('.').pop() : 'file').toUpperCase().slice(0, 5) }));
}

function entryOf(node) {
  const li = node.closest('li.entry');
  return li && state.entries.find((e) => e.path === li.dataset.path);
}

// ---------------------------------------------------------------- selection

export function selectedEntries() {
  return visibleEntries().filter((e) => state.selected.has(e.path));
}

/** Selects or clears one entry; with `range`, everything from the last clicked entry to it. */
function toggle(entry, { range = false, value } = {}) {
  const on = value ?? !state.selected.has(entry.path);
  if (range && state.anchor) {
    const files = visibleEntries().filter((e) => e.type !== 'directory');
    const a = files.findIndex((e) => e.path === state.anchor);
    const b = files.findIndex((e) => e.path === entry.path);
    if (a >= 0 && b >= 0) {
      for (const e of files.slice(Math.min(a, b), Math.max(a, b) + 1)) {
        if (on) state.selected.add(e.path); else state.selected.delete(e.path);
      }
    }
  } else if (on) {
    state.selected.add(entry.path);
  } else {
    state.selected.delete(entry.path);
  }
  state.anchor = entry.path;
  renderSelection();
}

export function selectAll() {
  for (const e of visibleEntries()) if (e.type !== 'directory') state.selected.add(e.path);
  renderSelection();
}

export function clearSelection() {
  state.selected.clear();
  state.anchor = null;
  renderSelection();
}

/** Updates checkboxes and the selection bar without rebuilding the list. */
export function renderSelection() {
  for (const li of $('entries').children) {
    const on = state.selected.has(li.dataset.path);
    li.classList.toggle('selected', on);
    const box = li.querySelector('.select');
    if (box) box.checked = on;
  }
  document.body.classList.toggle('selecting', state.selected.size > 0);
  renderSelectionBar();
}

export function bindBrowser() {
  $('up').onclick = () => { if (state.folder && state.folder !== '/') showFolder(parentPath(state.folder)); };
  $('crumbs').onclick = (event) => {
    const button = event.target.closest('button');
    if (button && button.dataset.path !== state.folder) showFolder(button.dataset.path);
  };
  $('sort').onchange = () => { state.sort = $('sort').value; renderFolder(); };
  $('sort-direction').onclick = () => { state.descending = !state.descending; renderFolder(); };
  $('show-hidden').onchange = () => {
    state.showHidden = $('show-hidden').checked;
    localStorage.setItem('ferry.showHidden', state.showHidden ? '1' : '0');
    renderFolder();
  };
  $('select-all').onclick = () => selectAll();
  $('selection-clear').onclick = () => clearSelection();
  $('delete-selected').onclick = () => deleteEntries(selectedEntries());
  $('download-selected').onclick = () => {
    // One click each: browsers ask once for several downloads from a page.
    for (const e of selectedEntries()) {
      const a = element('a', { href: fileURL(e, true), download: e.name });
      document.body.append(a);
      a.click();
      a.remove();
    }
  };
  const list = $('entries');
  list.addEventListener('click', async (event) => {
    const entry = entryOf(event.target);
    if (!entry) return;
    if (event.target.closest('.select')) {
      toggle(entry, { range: event.shiftKey, value: event.target.checked });
      return;
    }
    const action = event.target.closest('[data-action]');
    if (action) {
      if (action.dataset.action === 'delete') await deleteEntries([entry]);
      else if (action.dataset.action === 'rename') await renameEntry(entry);
      return;
    }
    if (!event.target.closest('.open')) return;
    // In selection mode a tap selects; shift-click selects a range.
    if (entry.type !== 'directory' && (state.selected.size > 0 || event.shiftKey)) {
      toggle(entry, { range: event.shiftKey });
      return;
    }
    if (entry.type === 'directory') showFolder(entry.path);
    else if (entry.image || entry.media === 'video') openViewer(entry);
    else location.assign(fileURL(entry, true));
  });
  // A long press starts selecting (touch screens have no shift key).
  let pressTimer = 0;
  let pressed = false;
  list.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse') return;
    const entry = entryOf(event.target);
    if (!entry || entry.type === 'directory') return;
    pressed = false;
    pressTimer = setTimeout(() => { pressed = true; toggle(entry, { value: true }); }, 500);
  });
  const cancelPress = () => clearTimeout(pressTimer);
  list.addEventListener('pointerup', cancelPress);
  list.addEventListener('pointercancel', cancelPress);
  list.addEventListener('pointermove', cancelPress);
  list.addEventListener('click', (event) => {
    if (pressed) { pressed = false; event.stopImmediatePropagation(); event.preventDefault(); }
  }, true);
  list.addEventListener('contextmenu', (event) => { if (event.pointerType !== 'mouse' && entryOf(event.target)) event.preventDefault(); });
  $('new-folder').onclick = makeFolder;
  document.addEventListener('keydown', (event) => {
    if (viewer.open || $('dialog').open || $('browser').hidden) return;
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName) && event.target.type !== 'checkbox';
    if (event.key === 'Backspace' && !typing) {
      event.preventDefault();
      $('up').click();
    } else if (event.key === 'Escape' && state.selected.size > 0) {
      event.preventDefault();
      clearSelection();
    } else if ((event.key === 'a' || event.key === 'A') && (event.ctrlKey || event.metaKey) && !typing) {
      event.preventDefault();
      selectAll();
    }
  });
}
