// The date scrubber: a strip on the window's right edge of a long folder, marked with its months
// (or days), that jumps the grid to the place dragged to and says which day is there. It imports
// nothing of the page's: list.js gives it the grid and the labels (no import cycle).

/**
 * A scrubber in `strip` for `grid` (grid.js); `label(day)` names a day header's day, `mark(day)`
 * the mark for the strip (a month, say), `top()` the list's top in the page.
 */
export function createScrubber(strip, grid, { label, mark, minScreens = 4 }) {
  const handle = strip.querySelector('.scrub-handle');
  const bubble = strip.querySelector('.scrub-label');
  const marks = strip.querySelector('.scrub-marks');
  let dragging = false;

  const range = () => Math.max(1, document.documentElement.scrollHeight - window.innerHeight);

  function place() {
    const f = Math.min(1, Math.max(0, window.scrollY / range()));
    handle.style.transform = `translateY(${Math.round(f * (strip.clientHeight - handle.offsetHeight))}px)`;
  }

  /** The day header above the grid's place `y`, or null. */
  function dayAt(y) {
    const rows = grid.rows;
    let lo = 0;
    let hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (rows[mid].top <= y) lo = mid; else hi = mid - 1;
    }
    for (let i = lo; i >= 0; i--) if (rows[i] && rows[i].items[0].kind === 'day') return rows[i].items[0];
    return null;
  }

  function jump(event) {
    const r = strip.getBoundingClientRect();
    const f = Math.min(1, Math.max(0, (event.clientY - r.top) / r.height));
    window.scrollTo(0, f * range());
    const listTop = grid.list.getBoundingClientRect().top + window.scrollY;
    const day = dayAt(window.scrollY - listTop + 1);
    bubble.textContent = day ? label(day.day) : '';
    bubble.hidden = !day;
    bubble.style.transform = `translateY(${Math.round(f * r.height)}px)`;
    strip.dataset.day = day ? day.day : '';
  }

  /** Shows the strip for a long folder, with a mark where each month (or day) begins. */
  function update() {
    const long = grid.height > window.innerHeight * minScreens;
    strip.hidden = !long;
    if (!long) return;
    const listTop = grid.list.getBoundingClientRect().top + window.scrollY;
    const total = range();
    const seen = new Set();
    const nodes = [];
    for (const row of grid.rows) {
      const item = row.items[0];
      if (item.kind !== 'day') continue;
      const text = mark(item.day);
      if (seen.has(text)) continue;
      seen.add(text);
      const span = document.createElement('span');
      span.className = 'scrub-mark';
      span.textContent = text;
      span.style.top = `${Math.min(100, ((listTop + row.top) / total) * 100)}%`;
      nodes.push(span);
    }
    // No more marks than fit: every nth.
    const room = Math.max(1, Math.floor(strip.clientHeight / 22));
    const every = Math.ceil(nodes.length / room);
    marks.replaceChildren(...nodes.filter((_, i) => i % every === 0));
    place();
  }

  strip.addEventListener('pointerdown', (event) => {
    dragging = true;
    strip.setPointerCapture(event.pointerId);
    strip.classList.add('dragging');
    event.preventDefault();
    jump(event);
  });
  strip.addEventListener('pointermove', (event) => { if (dragging) jump(event); });
  const end = () => {
    dragging = false;
    strip.classList.remove('dragging');
    bubble.hidden = true;
  };
  strip.addEventListener('pointerup', end);
  strip.addEventListener('pointercancel', end);
  window.addEventListener('scroll', () => { if (!strip.hidden) place(); }, { passive: true });
  return { update };
}
