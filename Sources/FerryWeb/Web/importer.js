// Importing to the computer: the selection bar ("Import N selected"), "Import all new (N, SIZE)" and
// the import panel. The import runs on the server (`/api/import`): this page, a reloaded one or
// another browser all show it by polling.
import { api } from './api.js';
import { $, element, formatDuration, formatSize, unbound } from './util.js';
import { ask } from './dialog.js';
import { showMessage, clearMessage } from './messages.js';
import { state } from './state.js';
import { selectedEntries } from './entries.js';

/** The list's actions the importer needs, handed in by app.js (`bindImport`). */
let list = { refreshFolder: unbound('refreshFolder'), clearSelection: unbound('clearSelection') };

const job = { status: null, timer: 0, newCount: null, seen: '', counted: 0, countToken: 0 };

/**
 * The selection bar (over the grid, at the bottom): the count and size, and Import counting what
 * is still to import, so it follows an import as it goes.
 */
export function renderSelectionBar() {
  const entries = selectedEntries();
  const n = entries.length;
  const bar = $('selection-bar');
  bar.hidden = n === 0;
  const files = entries.filter((e) => e.type !== 'directory');
  const bytes = files.reduce((s, e) => s + (e.size || 0), 0);
  const imported = files.filter((e) => e.imported).length;
  $('selection-count').replaceChildren(`${n}`, element('span', { class: 'long', text: ' selected' }),
    ` · ${formatSize(bytes)}` + (imported ? ` · ${imported} imported` : ''));
  $('selection-count').title = `${n} selected, ${formatSize(bytes)}`;
  // "Import 3 selected"; on a phone just "Import" (app.css hides the rest): the bar keeps one row.
  $('import-selected').replaceChildren('Import', element('span', { class: 'long', text: ` ${files.length} selected` }));
  $('import-selected').dataset.count = String(files.length - imported);
  $('import-selected').disabled = files.length === 0 || running();
  $('download-selected').disabled = files.length === 0;
  const can = (state.source && state.source.capabilities) || {};
  $('delete-selected').hidden = !can.delete;
  $('delete-selected').disabled = entries.every((e) => e.system);
  $('rename-selected').hidden = !can.rename;
  $('rename-selected').disabled = n !== 1;
}

function running() {
  return job.status && job.status.state === 'running';
}

/** The import's options: folders (as on the source, by date, or a template), names, job code. */
function options() {
  const folders = $('import-layout').value;
  const o = { layout: folders === 'template' ? 'tree' : folders, deleteAfter: $('import-delete-after').checked };
  const folderTemplate = $('import-folder-template').value.trim();
  if (folders === 'template' && folderTemplate) o.folderTemplate = folderTemplate;
  const nameTemplate = $('import-name-template').value.trim();
  if (nameTemplate) o.nameTemplate = nameTemplate;
  const tag = $('import-tag').value.trim();
  if (tag) o.tag = tag;
  return o;
}

const preview = { timer: 0, token: 0 };

/** Shows where the first new files would go with these options (a dry run on the server), soon after a change. */
function schedulePreview() {
  clearTimeout(preview.timer);
  if (!$('import-options').open) return;
  preview.timer = setTimeout(showPreview, 400);
}

async function showPreview() {
  const token = ++preview.token;
  const list = $('import-preview');
  const { deleteAfter, ...rest } = options();
  let answer;
  try {
    answer = await api('import-preview', { body: { ...rest, ...scope() }, quiet: true });
  } catch (error) {
    if (token !== preview.token) return;
    list.replaceChildren(element('li', { class: 'error', text: error.message }));
    return;
  }
  if (token !== preview.token) return;
  list.replaceChildren(...(answer.items.length
    ? answer.items.map((i) => element('li', { text: `${i.path.split('/').pop()} → ${i.destination}` }))
    : [element('li', { class: 'muted', text: 'nothing new to import' })]));
}

/**
 * What "Import all new" takes, as `/api/new` and `/api/import` read it: this folder (with its
 * subfolders) or the whole source, and photos and videos (the default), all files, or the
 * extensions typed in.
 */
function scope() {
  const wholeSource = $('import-scope').value === 'source' || !state.folder || state.folder === '/';
  const chosen = $('import-kinds').value;
  const kinds = chosen === 'only' ? ($('import-only').value.trim() || 'media') : chosen;
  return wholeSource ? { kinds } : { folder: state.folder, kinds };
}

/** The import options kept from one visit to the next. */
function saveOptions() {
  localStorage.setItem('ferry.importLayout', $('import-layout').value);
  for (const id of ['import-folder-template', 'import-name-template', 'import-tag']) {
    localStorage.setItem(`ferry.${id}`, $(id).value);
  }
  localStorage.setItem('ferry.importScope', $('import-scope').value);
  localStorage.setItem('ferry.importKinds', $('import-kinds').value);
  localStorage.setItem('ferry.importOnly', $('import-only').value);
}

function restoreOptions() {
  const scopeChoice = localStorage.getItem('ferry.importScope');
  if (scopeChoice === 'folder' || scopeChoice === 'source') $('import-scope').value = scopeChoice;
  const kinds = localStorage.getItem('ferry.importKinds');
  if (['media', 'all', 'only'].includes(kinds)) $('import-kinds').value = kinds;
  $('import-only').value = localStorage.getItem('ferry.importOnly') || '';
  $('import-only-label').hidden = $('import-kinds').value !== 'only';
  const layout = localStorage.getItem('ferry.importLayout');
  if (['tree', 'date', 'template'].includes(layout)) $('import-layout').value = layout;
  for (const id of ['import-folder-template', 'import-name-template', 'import-tag']) {
    $(id).value = localStorage.getItem(`ferry.${id}`) || '';
  }
  $('import-folder-template-label').hidden = $('import-layout').value !== 'template';
}

/** Called when another folder is shown: with "this folder" the count is of the new one. */
export function folderShown() {
  // The first count waits for the first screen (bindImport); later folders count at once.
  if (job.countToken > 0 && $('import-scope').value === 'folder') refreshNewCount();
  if ($('import-scope').value === 'folder') schedulePreview();
}

async function start(paths, count, bytes) {
  const chosen = options();
  const { deleteAfter } = chosen;
  if (deleteAfter) {
    const yes = await ask(`Import ${count} file${count === 1 ? '' : 's'} (${formatSize(bytes)}) and delete ` +
      `${count === 1 ? 'it' : 'each'} from the source once its copy is verified?`, { ok: `Import and delete ${count}`, danger: true });
    if (!yes) return;
  }
  try {
    const body = { ...chosen };
    if (paths) body.paths = paths;
    else Object.assign(body, scope());
    job.status = await api('import', { body });
    job.seen = 'started';  // the next poll's answer counts as a change
    clearMessage('import');
    renderPanel();
    poll();
  } catch (error) {
    showMessage(error.message, { kind: 'import' });
  }
}

export async function refreshNewCount() {
  const token = ++job.countToken;
  const asked = scope();
  job.newCount = null;
  renderNewButton();
  let n = null;
  try {
    // Counting walks the folder or the whole source: in the background, after what the person asked for.
    n = await api('new', { params: { background: '1', ...asked }, quiet: true });
  } catch (_) { /* shown as "counting…" until the next count */ }
  if (token !== job.countToken) return;  // the folder or the options changed meanwhile
  job.newCount = n;
  if (n && n.destination) {
    // Another tab may have chosen another import folder: the server's choice is the one shown.
    $('import-destination').value = n.destination;
    if (state.source) state.source.importPath = n.destination;
    if ($('import-destination-choice').value !== n.destination) $('import-destination-choice').value = n.destination;
  }
  renderNewButton();
}

function renderNewButton() {
  const b = $('import-new');
  const n = job.newCount;
  // "Import all new (12, 8.8 MB)"; on a phone "Import new (12, 8.8 MB)" (app.css hides "all").
  // A raw file with its JPEG and sidecars is one photo (`items`); the files are in the tooltip.
  const items = n ? (n.items ?? n.count) : 0;
  // "Import all new" for the whole source; "Import new here" for this folder and its subfolders.
  const here = !!scope().folder;
  // On a phone "Import new (12, 8.8 MB)" either way (app.css hides the long words).
  b.replaceChildren('Import', element('span', { class: 'long', text: here ? '' : ' all' }), ' new',
    element('span', { class: 'long', text: here ? ' here' : '' }),
    n ? ` (${items}, ${formatSize(n.bytes)})` : ' (counting…)');
  const what = { media: 'photos and videos', all: 'files' }[scope().kinds] || `files (${scope().kinds})`;
  const where = here ? `in ${state.folder} and its subfolders` : 'on the whole source';
  const to = $('import-destination').value ? ` to ${$('import-destination').value}` : '';
  b.title = n ? `${items} new ${what} ${where}` +
    (items !== n.count ? ` in ${n.count} files (raw + JPEG pairs and sidecars count once)` : '') + to : '';
  b.dataset.count = n ? String(n.count) : '';
  b.disabled = running() || (n && n.count === 0);
}

function renderPanel() {
  const s = job.status;
  const panel = $('import-panel');
  const state_ = s ? s.state : 'idle';
  panel.dataset.state = state_;
  panel.dataset.done = String(s ? s.done : 0);
  panel.dataset.total = String(s ? s.total : 0);
  panel.dataset.failed = String(s ? s.failed : 0);
  panel.hidden = !s || state_ === 'idle' || panel.dataset.dismissed === `${state_}-${s.done}-${s.total}`;
  if (!s) return;
  const fraction = s.bytesTotal > 0 ? s.bytesDone / s.bytesTotal : (s.total ? s.done / s.total : 0);
  $('import-bar').value = Math.min(1, fraction);
  const title = {
    running: 'Importing', done: 'Imported', failed: 'Import finished with failures', cancelled: 'Import cancelled',
  }[state_] || 'Import';
  $('import-title').textContent = `${title} · to ${s.destination}/`;
  const waiting = state_ === 'running' && !!s.waitingForSource;
  const parts = [`${s.done} / ${s.total} files`, `${formatSize(s.bytesDone)} / ${formatSize(s.bytesTotal)}`];
  if (state_ === 'running' && !waiting && s.bytesPerSecond > 0) parts.push(`${formatSize(s.bytesPerSecond)}/s`);
  if (state_ === 'running' && !waiting && s.eta != null) parts.push(`${formatDuration(s.eta)} left`);
  if (s.deleted) parts.push(`${s.deleted} deleted from the source`);
  $('import-figures').textContent = parts.join(' · ');
  const card = state.source && (state.source.scheme === 'flashair' || state.source.scheme === 'ezshare');
  const lost = `${card ? 'The card' : 'The source'} stopped answering; the import goes on by itself when it is back.`;
  $('import-current').textContent = waiting ? lost
    : s.current ? `Now: ${s.current.split('/').pop()}` : (s.error || '');
  $('import-panel').dataset.waiting = String(waiting);
  if (waiting) $('import-title').textContent = `Waiting for the ${card ? 'card' : 'source'} · to ${s.destination}/`;
  const failures = $('import-failures');
  failures.replaceChildren(...s.failures.map((f) => element('li', { text: `${f.path.split('/').pop()}: ${f.reason}` })));
  failures.hidden = s.failures.length === 0;
  $('import-cancel').hidden = state_ !== 'running';
  $('import-restart').hidden = !(state_ === 'cancelled' || state_ === 'failed');
  $('import-dismiss').hidden = state_ === 'running';
  $('import-destination-choice').disabled = state_ === 'running';
  renderNewButton();
  renderSelectionBar();
}

/** Asks the server for the import's state: often while one runs, now and then otherwise (another browser may start one). */
async function poll() {
  clearTimeout(job.timer);
  try {
    const s = await api('import', { quiet: true });
    // Any change of the job (a file done, the end; here or started in another tab): badges,
    // files deleted after import, the selection bar and "Import all new (N, SIZE)" follow it.
    const seen = `${s.state}-${s.done}-${s.total}-${s.failed}-${s.deleted || 0}`;
    const changed = job.seen !== '' && seen !== job.seen;
    const first = job.seen === '';
    job.seen = seen;
    job.status = s;
    renderPanel();
    if (changed) {
      list.refreshFolder();
      const now = performance.now();
      // While it runs, the count at most every 2 s (it walks the source); at the end, at once.
      if (s.state !== 'running' || now - job.counted > 2000) {
        job.counted = now;
        refreshNewCount();
      }
    } else if (first && s.state === 'running') {
      list.refreshFolder();
    }
  } catch (_) { /* the server went away: try again later */ }
  job.timer = setTimeout(poll, running() ? 500 : 3000);
}

/** The folders the server lets the page import to (`ferry serve --import-to` given more than once), if several. */
function renderDestinationChoice() {
  const choices = (state.source && state.source.importChoices) || [];
  const select = $('import-destination-choice');
  // By the folder's name (its full path below, to copy); the full path where two share a name.
  const name = (path) => path.split('/').filter(Boolean).pop() || '/';
  const shared = (path) => choices.filter((other) => name(other) === name(path)).length > 1;
  select.replaceChildren(...choices.map((path) =>
    element('option', { value: path, text: shared(path) ? path : name(path), title: path })));
  if (state.source && state.source.importPath) select.value = state.source.importPath;
  $('import-destination-choice-label').hidden = choices.length < 2;
  $('import-destination-label').textContent = choices.length < 2 ? 'To' : 'Path';
  select.disabled = running();
}

/** Binds the import buttons and panel; `actions`: the list's `refreshFolder` and `clearSelection`. */
export function bindImport(actions) {
  list = { ...list, ...actions };
  restoreOptions();
  const card = state.source && (state.source.scheme === 'flashair' || state.source.scheme === 'ezshare');
  $('import-scope-source').textContent = card ? 'the whole card' : state.source && state.source.scheme === 'camera'
    ? 'the whole camera' : 'the whole source';
  if (state.source && state.source.importPath) $('import-destination').value = state.source.importPath;
  renderDestinationChoice();
  $('import-destination-choice').onchange = async () => {
    const select = $('import-destination-choice');
    try {
      // The server keeps the choice (for every tab): each folder has its own history, so the counts change.
      state.source = await api('import-to', { body: { path: select.value } });
      $('import-destination').value = state.source.importPath;
      clearMessage('import');
      job.seen = '';
      poll();
      refreshNewCount();
      schedulePreview();
    } catch (error) {
      select.value = state.source.importPath;
      showMessage(error.message, { kind: 'import' });
    }
  };
  for (const id of ['import-scope', 'import-kinds']) {
    $(id).onchange = () => {
      $('import-only-label').hidden = $('import-kinds').value !== 'only';
      saveOptions();
      refreshNewCount();
      schedulePreview();
    };
  }
  $('import-only').onchange = () => { saveOptions(); refreshNewCount(); schedulePreview(); };
  $('import-layout').onchange = () => {
    $('import-folder-template-label').hidden = $('import-layout').value !== 'template';
    saveOptions();
    schedulePreview();
  };
  for (const id of ['import-folder-template', 'import-name-template', 'import-tag']) {
    $(id).oninput = () => { saveOptions(); schedulePreview(); };
  }
  $('import-options').addEventListener('toggle', schedulePreview);
  $('import-copy-destination').onclick = async () => {
    const field = $('import-destination');
    try {
      await navigator.clipboard.writeText(field.value);
      $('import-copy-destination').textContent = 'Copied';
    } catch (_) {
      // No clipboard outside a secure origin (a phone on http://192.168...): select it to copy by hand.
      field.focus();
      field.select();
      $('import-copy-destination').textContent = 'Selected';
    }
    setTimeout(() => { $('import-copy-destination').textContent = 'Copy'; }, 1500);
  };
  $('import-selected').onclick = async () => {
    const entries = selectedEntries().filter((e) => e.type !== 'directory');
    if (!entries.length) return;
    const bytes = entries.reduce((s, e) => s + (e.size || 0), 0);
    await start(entries.map((e) => e.path), entries.length, bytes);
    list.clearSelection();
  };
  $('import-new').onclick = async () => {
    const n = job.newCount;
    await start(null, n ? n.count : 0, n ? n.bytes : 0);
  };
  $('import-cancel').onclick = async () => {
    try {
      job.status = await api('import-cancel', { body: {} });
      renderPanel();
    } catch (error) {
      showMessage(error.message, { kind: 'import' });
    }
  };
  $('import-restart').onclick = async () => {
    // The same import again (kept on the server, so this works after a reload or from another
    // browser): what is imported already is skipped, partial files resume.
    try {
      job.status = await api('import', { body: { restart: true } });
      job.seen = 'started';
      clearMessage('import');
      renderPanel();
      poll();
    } catch (error) {
      showMessage(error.message, { kind: 'import' });
    }
  };
  $('import-dismiss').onclick = () => {
    const s = job.status;
    $('import-panel').dataset.dismissed = `${s.state}-${s.done}-${s.total}`;
    $('import-panel').hidden = true;
  };
  poll();
  // After the first screen: on a card every request waits its turn, and thumbnails go first.
  setTimeout(refreshNewCount, 1500);
}
