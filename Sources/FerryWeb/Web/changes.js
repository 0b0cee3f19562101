// Changes on the source: new folder, rename, delete (one or several, folders with their contents).
import { api } from './api.js';
import { formatSize, joinPath, nameProblem, unbound } from './util.js';
import { ask } from './dialog.js';
import { showMessage, clearMessage } from './messages.js';
import { state } from './state.js';

/** The list's actions the changes need, handed in by app.js (`bindChanges`). */
let list = { reloadFolder: unbound('reloadFolder'), clearSelection: unbound('clearSelection') };

/** Takes the list's `reloadFolder` and `clearSelection`. */
export function bindChanges(actions) {
  list = { ...list, ...actions };
}

function scheme() {
  return state.source && state.source.scheme;
}

export async function makeFolder() {
  const name = await ask('New folder name', { input: '', ok: 'Create', check: (v) => nameProblem(v, scheme()) });
  if (!name) return;
  try {
    await api('mkdir', { body: { path: joinPath(state.folder, name) } });
    clearMessage('change');
    await list.reloadFolder();
  } catch (error) {
    showMessage(error.message, { kind: 'change' });
  }
}

export async function renameEntry(entry) {
  const name = await ask(`Rename “${entry.name}” to`, {
    input: entry.name, ok: 'Rename', check: (v) => nameProblem(v, scheme()),
  });
  if (!name || name === entry.name) return;
  try {
    await api('rename', { body: { path: entry.path, name } });
    clearMessage('change');
    await list.reloadFolder();
  } catch (error) {
    showMessage(error.message, { kind: 'change' });
  }
}

/**
 * Deletes a folder with everything in it, item by item (files, then folders deepest first),
 * showing how far it got; throws with what was done when an item fails.
 */
async function deleteTree(folder) {
  const files = [];
  const folders = [];
  const walk = async (path) => {
    const listing = await api('list', { params: { path } });
    for (const e of listing.entries) {
      if (e.type === 'directory') {
        folders.push(e.path);
        await walk(e.path);
      } else {
        files.push(e);
      }
    }
  };
  await walk(folder.path);
  let done = 0;
  try {
    for (const file of files) {
      showMessage(`Deleting “${folder.name}”: ${done + 1} of ${files.length} files…`, { info: true, kind: 'progress' });
      await api('delete', { body: { path: file.path } });
      done++;
    }
    for (const path of folders.reverse()) await api('delete', { body: { path } });
    await api('delete', { body: { path: folder.path } });
  } catch (error) {
    throw new Error(`${done} of ${files.length} files deleted, then: ${error.message}`);
  }
  showMessage(`Deleted “${folder.name}” and its ${files.length} file${files.length === 1 ? '' : 's'}.`,
    { info: true, kind: 'progress' });
}

/**
 * Deletes entries after one confirmation naming the count and size. A folder that holds files is
 * not deleted blindly: the server says what it holds, and the page offers to delete it with its
 * contents.
 */
export async function deleteEntries(entries) {
  entries = entries.filter((e) => !e.system);
  if (!entries.length) return;
  const bytes = entries.reduce((n, e) => n + (e.size || 0), 0);
  const text = entries.length === 1
    ? `Delete ${entries[0].type === 'directory' ? 'the folder ' : ''}“${entries[0].name}”` +
      `${bytes ? ` (${formatSize(bytes)})` : ''} from the source? This cannot be undone.`
    : `Delete ${entries.length} items (${formatSize(bytes)}) from the source? This cannot be undone.`;
  if (!(await ask(text, { ok: 'Delete', danger: true }))) return;
  const failures = [];
  let done = 0;
  for (const entry of entries) {
    if (entries.length > 1) showMessage(`Deleting ${done + 1} of ${entries.length}: ${entry.name}`, { info: true, kind: 'progress' });
    try {
      await api('delete', { body: { path: entry.path } });
      done++;
    } catch (error) {
      if (error.status === 409 && error.data && error.data.notEmpty) {
        const d = error.data;
        const yes = await ask(`The folder “${entry.name}” holds ${d.files} file${d.files === 1 ? '' : 's'}` +
          ` (${formatSize(d.bytes)}). Delete it with everything in it?`, { ok: 'Delete all', danger: true });
        if (!yes) continue;
        try {
          await deleteTree(entry);
          done++;
        } catch (again) {
          failures.push(`${entry.name}: ${again.message}`);
        }
      } else {
        failures.push(entries.length === 1 ? error.message : `${entry.name}: ${error.message}`);
      }
    }
  }
  if (failures.length) {
    showMessage(failures.length === 1 ? failures[0] : `${failures.length} not deleted: ${failures.join('; ')}`, { kind: 'change' });
  } else {
    clearMessage('change');
  }
  list.clearSelection();
  await list.reloadFolder();
}
