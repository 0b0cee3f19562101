// The one dialog: a question, or a field whose value is checked before it is accepted.
import { $ } from './util.js';

/**
 * Asks for text (`input` given) or a confirmation; resolves to the text, true, or null.
 * `check(value)` returns why the value cannot be used (shown in the dialog), or null.
 */
export function ask(text, { input, ok = 'OK', danger = false, check } = {}) {
  const dialog = $('dialog');
  $('dialog-text').textContent = text;
  const field = $('dialog-input');
  const problem = $('dialog-problem');
  problem.textContent = '';
  problem.hidden = true;
  field.hidden = input === undefined;
  field.value = input ?? '';
  $('dialog-ok').textContent = ok;
  $('dialog-ok').classList.toggle('danger', danger);
  const form = dialog.querySelector('form');
  return new Promise((resolve) => {
    form.onsubmit = (event) => {
      if (input === undefined || !check || event.submitter?.value === 'cancel') return;
      const why = check(field.value.trim());
      if (why) {
        event.preventDefault();
        problem.textContent = why;
        problem.hidden = false;
        field.focus();
      }
    };
    dialog.onclose = () => {
      if (dialog.returnValue !== 'ok') resolve(null);
      else resolve(input === undefined ? true : field.value.trim());
    };
    dialog.returnValue = '';
    dialog.showModal();
    if (input !== undefined) {
      field.focus();
      const dot = field.value.lastIndexOf('.');
      field.setSelectionRange(0, dot > 0 ? dot : field.value.length);
    }
  });
}
