// Ferry's browser UI over the JSON API of `ferry serve`: plain JavaScript modules, no build step,
// no third-party code. This module starts the page; the others hold one concern each:
//   api.js       the API client ("waiting for the card")
//   list.js      the folder: folders, the photo grid (grid.js: virtualized rows, thumbnail
//                loading), day sections, hidden entries and selection (sorting: sort.js)
//   viewer.js    the progressive viewer
//   importer.js  import to the computer: buttons, panel
//   changes.js   new folder, rename, delete;  uploads.js  uploads
//   entries.js   what the folder shows (entries in order, the selection, the page's address)
// No module imports one that imports it back (WebModuleGraphTests): what one module does for
// another is handed in here, through the bind functions.
import { api, setSingleConnection } from './api.js';
import { $ } from './util.js';
import { bindMessages } from './messages.js';
import { state } from './state.js';
import { bindBrowser, showFolder, reloadFolder, refreshFolder, clearSelection } from './list.js';
import { bindViewer, openViewer, closeViewer, viewer } from './viewer.js';
import { bindUploads } from './uploads.js';
import { bindImport, renderSelectionBar, folderShown } from './importer.js';
import { bindChanges, deleteEntries, renameEntry, makeFolder } from './changes.js';

function showPage(id) {
  for (const page of ['connect', 'locked', 'browser']) $(page).hidden = page !== id;
}

async function start() {
  bindMessages();
  bindBrowser({
    openViewer, viewerIsOpen: () => viewer.open, deleteEntries, renameEntry, makeFolder, renderSelectionBar,
    folderShown,
  });
  bindChanges({ reloadFolder, clearSelection });
  bindViewer();
  bindUploads({ reloadFolder });
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
    $('connect-status').textContent = /^[a-z]+:\/\//i.test(url) || url.startsWith('/') ? 'Opening…' : `Looking for a card or server at ${url}…`;
    try {
      const source = await api('connect', { body: { url } });
      state.source = source;
      enterSource(source);
      history.pushState({ path: '/' }, '', '/?path=%2F');
      await showFolder('/', { history: 'none' });
    } catch (error) {
      $('connect-error').textContent = error.message;
    } finally {
      $('connect-status').textContent = '';
    }
  };
}

let importBound = false;

function enterSource(source) {
  showPage('browser');
  const can = source.capabilities || {};
  $('upload-button').hidden = !can.upload;
  $('new-folder').hidden = !can.mkdir;
  $('change-source').hidden = !source.canConnect;
  setSingleConnection(!!source.singleConnection);
  if (!importBound) {
    importBound = true;
    bindImport({ refreshFolder, clearSelection });
  }
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

$('change-source').onclick = () => { showConnect(); };
// Phones: the toolbar's less used actions behind "…" (app.css), so it stays one or two rows.
$('more').onclick = () => {
  const open = document.querySelector('.bar').classList.toggle('more-open');
  $('more').setAttribute('aria-expanded', String(open));
};

start();
