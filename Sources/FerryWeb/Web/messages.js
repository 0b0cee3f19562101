// The banner under the toolbar: errors stay until closed or until a later action of the same kind
// succeeds (`clearMessage(kind)`); information goes by itself.
import { $ } from './util.js';

let timer = 0;
let shownKind = null;

export function showMessage(text, { info = false, kind = 'other' } = {}) {
  const m = $('message');
  $('message-text').textContent = text;
  m.className = info ? 'info' : '';
  m.dataset.kind = kind;
  m.hidden = false;
  shownKind = kind;
  clearTimeout(timer);
  if (info) timer = setTimeout(() => { m.hidden = true; }, 3000);
}

/** Clears an error of `kind` (a later action of that kind worked). */
export function clearMessage(kind) {
  if (shownKind === kind || kind === undefined) {
    $('message').hidden = true;
    shownKind = null;
  }
}

export function bindMessages() {
  $('message-close').onclick = () => { $('message').hidden = true; shownKind = null; };
}
