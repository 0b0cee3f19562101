// The one place entries are ordered: folders first, then by the chosen key, names compared as
// people read them (IMG_2 before IMG_10). The server sends listings in the source's order.

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export function compareNames(a, b) {
  return collator.compare(a, b);
}

/** A sorted copy of `entries`: `key` is name, date or size; folders stay first in both directions. */
export function sortEntries(entries, key, descending) {
  const direction = descending ? -1 : 1;
  const byName = (a, b) => collator.compare(a.name, b.name);
  const compare = {
    name: byName,
    date: (a, b) => (a.modified || '').localeCompare(b.modified || '') || byName(a, b),
    size: (a, b) => (a.size ?? -1) - (b.size ?? -1) || byName(a, b),
  }[key] || byName;
  return [...entries].sort((a, b) => {
    const folderA = a.type === 'directory';
    const folderB = b.type === 'directory';
    if (folderA !== folderB) return folderA ? -1 : 1;
    return direction * compare(a, b);
  });
}
