// Uploads: one row per file with its progress, cancel, and a replace question on a name clash.
import { apiURL } from './api.js';
import { $, element, unbound } from './util.js';
import { ask } from './dialog.js';
import { state } from './state.js';

/** The list's `reloadFolder`, handed in by app.js (`bindUploads`). */
let reloadFolder = unbound('reloadFolder');

let reloadTimer = 0;

export function uploadFiles(files) {
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

/** Binds the upload button and drops; `actions.reloadFolder` shows what arrived. */
export function bindUploads(actions) {
  reloadFolder = actions.reloadFolder;
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
}
