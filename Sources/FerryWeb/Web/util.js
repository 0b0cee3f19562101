// Small helpers shared by every module: DOM, formatting, paths.

export const $ = (id) => document.getElementById(id);

/**
 * What tests and automation can read: timings and the images the viewer showed. Setting
 * `ferry.prefetch = false` stops the viewer fetching neighbours (a test that needs an image
 * never fetched before).
 */
export const ferry = (window.ferry = { timings: {}, shown: [] });

/** A stand-in for an action app.js hands in: calling it before then is a wiring bug, said loudly. */
export function unbound(name) {
  return () => { throw new Error(`${name} was called before app.js handed it in`); };
}

export function joinPath(folder, name) {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

export function parentPath(path) {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function formatSize(n) {
  if (n == null) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return i === 0 ? `${n} B` : `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

export function formatDuration(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return '';
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m}:${String(s % 60).padStart(2, '0')}`;
}

// One formatter for all entries: making them per call costs more than the rest of a render.
const dateOptions = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' };
const localDates = new Intl.DateTimeFormat(undefined, dateOptions);
const floatingDates = new Intl.DateTimeFormat(undefined, { ...dateOptions, timeZone: 'UTC' });

export function formatDate(iso) {
  if (!iso) return '';
  // Floating times (no Z) are the source's local time: show them as they are.
  const utc = iso.endsWith('Z');
  const d = new Date(utc ? iso : iso + 'Z');
  if (Number.isNaN(d.getTime())) return iso;
  return (utc ? localDates : floatingDates).format(d);
}

export function element(tag, props, ...children) {
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

/**
 * Why `name` cannot be a file or folder name, or null when it can. Checked in the dialog, before
 * any request: `/` and `\` separate folders, NUL and control characters are refused by every source,
 * and a FlashAir card (FAT) also refuses `: * ? " < > |`.
 */
export function nameProblem(name, scheme) {
  if (!name) return 'A name is needed.';
  if (name === '.' || name === '..') return `“${name}” names a folder itself; choose another name.`;
  if (/[/\\]/.test(name)) return 'A name cannot contain “/” or “\\” (they separate folders).';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A name cannot contain control characters (line breaks, tabs, NUL).';
  if (scheme === 'flashair' && /[:*?"<>|]/.test(name)) {
    return 'A card cannot store : * ? " < > | in names.';
  }
  if (new TextEncoder().encode(name).length > 255) return 'The name is too long (at most 255 bytes).';
  return null;
}
