// What the folder shows, shared by the list, the viewer and the importer: the page's address
// for a folder (and a photo in it), the entries shown in their order, and the selected ones.
import { sortEntries } from './sort.js';
import { state } from './state.js';

/** The page's address for `path`, with `image` open in the viewer when given. */
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

/** The selected entries, in the order shown. */
export function selectedEntries() {
  return visibleEntries().filter((e) => state.selected.has(e.path));
}
