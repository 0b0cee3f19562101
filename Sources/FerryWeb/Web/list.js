// The folder list: listing, sorting (sort.js), tiles, thumbnails, hidden entries and selection.
import { api, fileURL, thumbURL } from './api.js';
import { createGrid, createLoader } from './grid.js';
import { createScrubber } from './scrubber.js';
import { $, element, ferry, formatDate, formatSize, parentPath, unbound } from './util.js';
import { showMessage, clearMessage } from './messages.js';
import { state } from './state.js';
import { folderURL, visibleEntries, selectedEntries } from './entries.js';

/**
 * What the list does that other modules own, handed in by app.js (`bindBrowser`): opening the
 * viewer, changes (new folder, rename, delete) and the selection bar. No module the list imports
 * imports the list back.
 */
let actions = Object.fromEntries(
  ['openViewer', 'viewerIsOpen', 'deleteEntries', 'renameEntry', 'makeFolder', 'renderSelectionBar', 'folderShown']
    .map((name) => [name, unbound(name)]));

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
  const moved = state.folder !== listing.path;
  if (moved) {
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
  // Another folder: what "Import new here" counts follows it.
  if (moved && state.folder !== null) actions.folderShown();
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
  // The grid's items again (cheap): its tiles in the DOM are updated in place, none rebuilt.
  renderFolder();
}

function importedBadge() {
  // A small check at the corner (a word would cover a phone's tile); its name for screen readers.
  return element('span', { class: 'badge', text: '✓', role: 'img', 'aria-label': 'Imported', dataset: { testid: 'imported-badge' } });
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
  $('sort-direction').title = state.sort === 'date' ? (state.descending ? 'Newest first' : 'Oldest first') : 'Reverse order';
  $('show-hidden').checked = state.showHidden;

  // Folders at the top, as a plain list (a folder holds few); files in the virtualized grid.
  const folders = entries.filter((e) => e.type === 'directory');
  const files = entries.filter((e) => e.type !== 'directory');
  // The same folders again (a refresh while importing) are updated in place: a rebuild under the
  // pointer would swallow a click.
  const shown = [...$('folders').children];
  if (shown.length === folders.length && shown.every((li, i) => li.dataset.path === folders[i].path)) {
    shown.forEach((li, i) => updateTile(li, folders[i]));
  } else {
    $('folders').replaceChildren(...folders.map((e) => renderEntry(e)));
  }
  $('folders').hidden = folders.length === 0;
  const list = $('entries');
  list.dataset.path = path;
  const g = theGrid();
  const side = thumbSide();
  if (g.folder !== path || side !== state.thumbSide) { g.clear(); g.folder = path; }
  state.thumbSide = side;
  const items = gridItems(files);
  const months = new Set(items.filter((i) => i.kind === 'day').map((i) => i.day.slice(0, 7)));
  g.oneMonth = months.size <= 1;
  g.setItems(items);
  $('empty').hidden = count > 0;
  renderSelection();
}

// ---------------------------------------------------------------- the grid

const dayNames = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

/** The local calendar day of an entry's date (taken, else modified) as YYYY-MM-DD, or ''. */
export function dayOf(entry) {
  const iso = entry.taken || entry.modified;
  if (!iso) return '';
  if (!iso.endsWith('Z')) return iso.slice(0, 10);  // floating: the source's local time as it is
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

const monthNames = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const shortDays = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** The scrubber's mark for a day: its month, or the day itself in a folder of one month. */
function dayMark(day) {
  if (!day) return '—';
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return day;
  return grid && grid.oneMonth ? shortDays.format(d) : monthNames.format(d);
}

function dayLabel(day) {
  if (!day) return 'No date';
  const d = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? day : dayNames.format(d);
}

/**
 * The grid's items: files under day headers where the order keeps days together (by date, and by
 * name, which on a camera follows the time); by size, one run without headers.
 */
function gridItems(files) {
  const items = [];
  const sections = state.sort !== 'size';
  let current = null;
  let header = null;
  for (const entry of files) {
    if (sections) {
      const day = dayOf(entry);
      if (day !== current || !header) {
        current = day;
        header = { kind: 'day', key: `day:${day}:${items.length}`, day, count: 0, paths: [] };
        items.push(header);
      }
      header.count++;
      header.paths.push(entry.path);
    }
    items.push({ kind: 'tile', key: entry.path, entry });
  }
  return items;
}

/** CSS pixels a tile needs at least: four columns on a phone, denser than a file manager anywhere. */
function minTile() {
  return window.innerWidth <= 600 ? 88 : 150;
}

const GAP = 3;  // px between tiles
let grid = null;
let loader = null;

function theGrid() {
  if (grid) return grid;
  grid = createGrid($('entries'), {
    minTile, gap: GAP,
    draw: (item) => (item.kind === 'day' ? renderDay(item) : renderTile(item.entry)),
    update: (li, item) => (item.kind === 'day' ? updateDay(li, item) : updateTile(li, item.entry)),
    dropped: (li) => { const img = li.querySelector('img'); if (img) loader.drop(img); },
  });
  loader = createLoader(grid, {
    // A card answers one request at a time (the server sends thumbnails one by one): two keep it busy.
    inFlight: () => (state.source && state.source.singleConnection ? 2 : 4),
    failed: (img) => fileTile(img),
  });
  const scrubber = createScrubber($('scrubber'), grid, { label: dayLabel, mark: dayMark });
  grid.onLayout = () => scrubber.update();
  ferry.grid = { loader, grid };
  return grid;
}

function renderDay(item) {
  const li = element('li', { class: 'day', dataset: { testid: 'day', day: item.day } },
    element('span', { class: 'day-label', text: dayLabel(item.day) }),
    element('span', { class: 'day-count muted' }),
    element('button', { type: 'button', class: 'day-select', dataset: { testid: 'day-select' } }));
  updateDay(li, item);
  return li;
}

function updateDay(li, item) {
  li.item = item;
  li.dataset.day = item.day;
  li.querySelector('.day-label').textContent = dayLabel(item.day);
  li.querySelector('.day-count').textContent = `${item.count}`;
  const all = item.paths.every((p) => state.selected.has(p));
  const button = li.querySelector('.day-select');
  button.textContent = all ? 'Clear day' : 'Select day';
  button.setAttribute('aria-label', `${all ? 'Clear' : 'Select'} all photos of ${dayLabel(item.day)}`);
  button.dataset.all = String(all);
}

/** The thumbnail size to ask for: the tile's pixels on this screen, where the source is fast. */
function thumbSide() {
  const source = state.source || {};
  if (source.singleConnection) return undefined;  // a card: its own thumbnails, no full download
  const width = $('entries').clientWidth || window.innerWidth;
  const cols = Math.max(1, Math.floor((width + GAP) / (minTile() + GAP)));
  const tile = (width - GAP * (cols - 1)) / cols;
  // A 256-pixel thumbnail of a 4:3 photo is 192 high: a square tile crops to that.
  return tile * (window.devicePixelRatio || 1) > 200 ? 512 : undefined;
}

function renderTile(entry) {
  const li = renderEntry(entry);
  const img = li.querySelector('img');
  if (img) {
    img.tile = li;
    loader.want(img);
  }
  return li;
}

function updateTile(li, entry) {
  li.dataset.imported = String(!!entry.imported);
  li.querySelector('.badge')?.remove();
  if (entry.imported) li.prepend(importedBadge());
  const on = state.selected.has(entry.path);
  li.classList.toggle('selected', on);
  const box = li.querySelector('.select');
  if (box) box.checked = on;
}

const FOLDER_ICON = '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true">' +
  '<path fill="currentColor" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/></svg>';
const FILE_ICON = '<svg viewBox="0 0 24 24" width="40" height="40" aria-hidden="true">' +
  '<path fill="currentColor" d="M6 2h8l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm7 1.5V8h4.5z"/></svg>';
const VIDEO_ICON = '<svg viewBox="0 0 24 24" width="40" height="40" aria-hidden="true">' +
  '<path fill="currentColor" d="M4 5h11a2 2 0 0 1 2 2v2.5l4-2.5v10l-4-2.5V17a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2z"/></svg>';

/** What a tile's tooltip and screen reader say: the name, size and date (no caption under a photo). */
function describe(entry) {
  if (entry.type === 'directory') return `${entry.name} (folder)`;
  return [entry.name, formatSize(entry.size), formatDate(entry.modified)].filter(Boolean).join(' · ');
}

/** A tile: photo only (no per-tile buttons), a check mark, the imported badge; folders with their name. */
function renderEntry(entry) {
  const isFolder = entry.type === 'directory';
  let thumb;
  let caption = null;
  if (!isFolder && (entry.thumbnail || entry.image)) {
    const src = entry.thumbnail ? thumbURL(entry, state.thumbSide) : fileURL(entry);
    thumb = element('span', { class: 'thumb' }, element('img', { alt: '', decoding: 'async', draggable: false, dataset: { src } }));
  } else {
    thumb = element('span', { class: 'thumb' });
    thumb.innerHTML = isFolder ? FOLDER_ICON : entry.media === 'video' ? VIDEO_ICON : FILE_ICON;  // constant markup
    if (!isFolder) {
      const ext = entry.name.includes('.') ? entry.name.split('.').pop().toUpperCase() : 'FILE';
      thumb.append(element('span', { class: 'kind', text: ext.slice(0, 5) }));
    }
    caption = element('span', { class: 'name', text: entry.name });
  }
  const label = describe(entry);
  const open = element('button', { class: 'open', type: 'button', title: label, 'aria-label': label }, thumb, caption);
  const selected = state.selected.has(entry.path);
  const box = element('input', {
    type: 'checkbox', class: 'select', checked: selected, title: `Select ${entry.name}`,
    'aria-label': `Select ${entry.name}`, dataset: { testid: 'select' },
  });
  const badge = entry.imported ? importedBadge() : null;
  return element('li', {
    class: 'entry' + (selected ? ' selected' : ''), dataset: {
      testid: 'entry', name: entry.name, type: isFolder ? 'directory' : 'file', path: entry.path,
      imported: String(!!entry.imported), hidden: String(!!entry.hidden), media: entry.media || (entry.image ? 'image' : ''),
    },
  }, box, badge, open);
}

/** A thumbnail the server could not make (a raw file without a preview): the file-type tile instead. */
function fileTile(img) {
  const thumb = img.closest('.thumb');
  const name = img.closest('li.entry')?.dataset.name || '';
  img.remove();
  if (!thumb) return;
  thumb.innerHTML = FILE_ICON;  // constant markup
  thumb.append(element('span', { class: 'kind', text: (name.includes('.') ? name.split('.').pop() : 'file').toUpperCase().slice(0, 5) }));
  thumb.closest('.open')?.append(element('span', { class: 'name', text: name }));
}

function entryOf(node) {
  const li = node.closest('li.entry');
  return li && state.entries.find((e) => e.path === li.dataset.path);
}

// ---------------------------------------------------------------- selection

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

/** Updates the check marks in the DOM and the selection bar without rebuilding anything. */
export function renderSelection() {
  const elements = [...$('folders').children, ...(grid ? grid.shown.values() : [])];
  for (const li of elements) {
    if (li.classList.contains('day')) { updateDay(li, li.item); continue; }
    const on = state.selected.has(li.dataset.path);
    li.classList.toggle('selected', on);
    const box = li.querySelector('.select');
    if (box) box.checked = on;
  }
  document.body.classList.toggle('selecting', state.selected.size > 0);
  actions.renderSelectionBar();
}

/** Time of the last long press: the click the lifted finger makes is swallowed, wherever it lands. */
let longPressAt = -1e9;
const AFTER_LONG_PRESS = 800;  // ms

export function justLongPressed() {
  return performance.now() - longPressAt < AFTER_LONG_PRESS;
}

/** Binds the folder's controls; `handed` holds the actions other modules own (see `actions`). */
export function bindBrowser(handed) {
  actions = { ...actions, ...handed };
  $('up').onclick = () => { if (state.folder && state.folder !== '/') showFolder(parentPath(state.folder)); };
  $('crumbs').onclick = (event) => {
    const button = event.target.closest('button');
    if (button && button.dataset.path !== state.folder) showFolder(button.dataset.path);
  };
  const sortChanged = () => {
    localStorage.setItem('ferry.sort', `${state.sort} ${state.descending ? 'down' : 'up'}`);
    renderFolder();
  };
  $('sort').onchange = () => { state.sort = $('sort').value; sortChanged(); };
  $('sort-direction').onclick = () => { state.descending = !state.descending; sortChanged(); };
  $('show-hidden').onchange = () => {
    state.showHidden = $('show-hidden').checked;
    localStorage.setItem('ferry.showHidden', state.showHidden ? '1' : '0');
    renderFolder();
  };
  $('select-all').onclick = () => selectAll();
  $('selection-clear').onclick = () => clearSelection();
  $('delete-selected').onclick = () => actions.deleteEntries(selectedEntries());
  $('rename-selected').onclick = () => { const [one] = selectedEntries(); if (one) actions.renameEntry(one); };
  $('download-selected').onclick = () => {
    // One click each: browsers ask once for several downloads from a page.
    for (const e of selectedEntries()) {
      if (e.type === 'directory') continue;
      const a = element('a', { href: fileURL(e, true), download: e.name });
      document.body.append(a);
      a.click();
      a.remove();
    }
  };
  for (const list of [$('entries'), $('folders')]) bindList(list);
  // Nothing a finger lifts after a long press may act: not the selection bar that appeared, not a
  // tile (issue 28 item 9). Capture on the document, before any button's own handler.
  document.addEventListener('click', (event) => {
    if (!justLongPressed()) return;
    longPressAt = -1e9;
    ferry.swallowed = (ferry.swallowed || 0) + 1;
    event.stopImmediatePropagation();
    event.preventDefault();
  }, true);
  $('new-folder').onclick = () => actions.makeFolder();
  document.addEventListener('keydown', (event) => {
    if (actions.viewerIsOpen() || $('dialog').open || $('browser').hidden) return;
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

function bindList(list) {
  list.addEventListener('click', async (event) => {
    const day = event.target.closest('.day-select');
    if (day) {
      const item = day.closest('li.day').item;
      const all = item.paths.every((p) => state.selected.has(p));
      for (const p of item.paths) if (all) state.selected.delete(p); else state.selected.add(p);
      renderSelection();
      return;
    }
    const entry = entryOf(event.target);
    if (!entry) return;
    if (event.target.closest('.select')) {
      toggle(entry, { range: event.shiftKey, value: event.target.checked });
      return;
    }
    if (!event.target.closest('.open')) return;
    // In selection mode a tap selects; shift-click selects a range.
    if (state.selected.size > 0 || (event.shiftKey && entry.type !== 'directory')) {
      toggle(entry, { range: event.shiftKey && entry.type !== 'directory' });
      return;
    }
    if (entry.type === 'directory') showFolder(entry.path);
    else if (entry.image || entry.media === 'video') actions.openViewer(entry);
    else location.assign(fileURL(entry, true));
  });
  // A long press starts selecting (touch screens have no shift key).
  let pressTimer = 0;
  let start = null;
  let fired = false;
  list.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse') return;
    const entry = entryOf(event.target);
    if (!entry || event.target.closest('.select')) return;
    start = { x: event.clientX, y: event.clientY };
    fired = false;
    clearTimeout(pressTimer);
    pressTimer = setTimeout(() => {
      fired = true;
      longPressAt = performance.now();
      if (navigator.vibrate) navigator.vibrate(10);
      toggle(entry, { value: true });
    }, 500);
  });
  const cancelPress = () => clearTimeout(pressTimer);
  // A new touch is a new gesture: only the click of the long press's own lift is swallowed.
  document.addEventListener('pointerdown', () => { longPressAt = -1e9; }, true);
  // The click follows the lift, however long the finger stayed: swallowed from the lift on.
  document.addEventListener('pointerup', () => {
    cancelPress();
    if (fired) { fired = false; longPressAt = performance.now(); }
  }, true);
  list.addEventListener('pointercancel', cancelPress);
  list.addEventListener('pointermove', (event) => {
    if (start && Math.hypot(event.clientX - start.x, event.clientY - start.y) > 10) cancelPress();
  });
  list.addEventListener('contextmenu', (event) => { if (event.pointerType !== 'mouse' && entryOf(event.target)) event.preventDefault(); });
}
