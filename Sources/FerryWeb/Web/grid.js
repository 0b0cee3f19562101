// The virtualized photo grid: square tiles in rows under day headers, laid out from the entry
// count alone (the scroll height is the rows' sum), with only the rows in and near the window in
// the DOM; and the thumbnail loader, which asks for the tiles in or near view, a few at a time,
// the visible ones first, and cancels (AbortController) what was scrolled past before it came.
// It imports nothing of the page's: list.js gives it the tiles to draw (no import cycle).

const HEADER = 40;        // px, a day header's row
const RENDER_MARGIN = 1;  // screens above and below the window kept in the DOM
const LOAD_MARGIN = 200;  // px below (and above) the window whose thumbnails are asked for
const FAST = 2;           // px/ms: scrolling faster (a fling, a drag of the scrubber) asks for nothing...
const SETTLE = 120;       // ms: ...until it has been slower for this long

/**
 * A grid in `list` (an absolutely positioned container the window scrolls). `draw(item)` makes
 * the element of an item ({ kind: 'day' | 'tile', key, ... }), `update(element, item)` refreshes
 * one kept from before, `dropped(element)` is told when an element leaves the DOM.
 */
export function createGrid(list, { draw, update, dropped, minTile, gap }) {
  const grid = {
    list, items: [], rows: [], height: 0, cols: 1, tile: 100,
    shown: new Map(),  // key -> element in the DOM
    frame: 0,
    loader: null,
  };

  function layout() {
    const width = list.clientWidth || 1;
    const wanted = typeof minTile === 'function' ? minTile() : minTile;
    grid.cols = Math.max(1, Math.floor((width + gap) / (wanted + gap)));
    grid.tile = (width - gap * (grid.cols - 1)) / grid.cols;
    const rows = [];
    let top = 0;
    let row = null;
    for (const item of grid.items) {
      if (item.kind === 'day') {
        rows.push({ top, height: HEADER, items: [item] });
        top += HEADER;
        row = null;
        continue;
      }
      if (!row || row.items.length === grid.cols) {
        row = { top, height: grid.tile + gap, items: [] };
        rows.push(row);
        top += row.height;
      }
      row.items.push(item);
    }
    grid.rows = rows;
    grid.height = top;
    list.style.height = `${top}px`;
    list.style.setProperty('--tile', `${grid.tile}px`);
  }

  /** The first row whose bottom is below `y` (binary search: rows are in order). */
  function rowAt(y) {
    let lo = 0;
    let hi = grid.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = grid.rows[mid];
      if (r.top + r.height <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  /** The window as a range of the list's own coordinates. */
  function view() {
    const top = -list.getBoundingClientRect().top;
    return { top, bottom: top + window.innerHeight };
  }

  function render() {
    grid.frame = 0;
    const v = view();
    const screen = window.innerHeight;
    const from = rowAt(Math.max(0, v.top - screen * RENDER_MARGIN));
    const to = rowAt(v.bottom + screen * RENDER_MARGIN);
    const keep = new Set();
    const order = [];  // the elements in reading order: the DOM keeps it (tab order, screen readers)
    for (let i = from; i <= to && i < grid.rows.length; i++) {
      const row = grid.rows[i];
      row.items.forEach((item, column) => {
        keep.add(item.key);
        let element = grid.shown.get(item.key);
        if (!element) {
          element = draw(item);
          grid.shown.set(item.key, element);
        } else if (element.item !== item) {
          update(element, item);
        }
        element.item = item;
        const x = item.kind === 'day' ? 0 : column * (grid.tile + gap);
        const place = `translate(${Math.round(x)}px, ${Math.round(row.top)}px)`;
        if (element.style.transform !== place) element.style.transform = place;
        if (item.kind !== 'day') {
          const size = `${grid.tile}px`;
          if (element.style.width !== size) { element.style.width = size; element.style.height = size; }
        }
        element.top = row.top;
        order.push(element);
      });
    }
    for (const [key, element] of grid.shown) {
      if (keep.has(key)) continue;
      grid.shown.delete(key);
      element.remove();
      dropped(element);
    }
    // Into place with few moves: rows scrolled in come before or after the ones kept.
    const children = list.children;
    for (let i = 0; i < order.length; i++) {
      if (children[i] !== order[i]) list.insertBefore(order[i], children[i] || null);
    }
    if (grid.loader) grid.loader.pump(v);
  }

  grid.schedule = () => { if (!grid.frame) grid.frame = requestAnimationFrame(render); };
  grid.render = render;
  grid.view = view;
  /** New items (a folder, another sort): elements of items with the same key are kept. */
  grid.setItems = (items) => {
    grid.items = items;
    layout();
    render();
    if (grid.onLayout) grid.onLayout();
  };
  grid.relayout = () => { layout(); render(); if (grid.onLayout) grid.onLayout(); };
  grid.clear = () => {
    for (const element of grid.shown.values()) { element.remove(); dropped(element); }
    grid.shown.clear();
  };
  /** Where `key`'s row is in the list (for scrolling to it), or null. */
  grid.topOf = (key) => {
    for (const row of grid.rows) if (row.items.some((i) => i.key === key)) return row.top;
    return null;
  };
  window.addEventListener('scroll', grid.schedule, { passive: true });
  let width = 0;
  new ResizeObserver(() => {
    if (list.clientWidth === width) return;
    width = list.clientWidth;
    grid.relayout();
  }).observe(list);
  return grid;
}

/**
 * Loads thumbnails for the tiles in or near the window: at most `inFlight()` requests at once,
 * the one nearest the window's top first; a request whose tile left the loading zone (or the DOM)
 * before its answer is aborted. An image gets its thumbnail as a blob URL, freed with the tile.
 */
export function createLoader(grid, { inFlight, failed }) {
  const waiting = new Set();      // img elements wanting their thumbnail
  const running = new Map();      // img -> AbortController
  let last = null;                // the window's top when last pumped, and when
  let fastUntil = 0;
  let settle = 0;
  const loader = {
    requested: 0,  // thumbnail requests made (for tests and the benchmark)
    aborted: 0,
    want(img) { waiting.add(img); },
    drop(img) {
      waiting.delete(img);
      const controller = running.get(img);
      if (controller) { controller.abort(); running.delete(img); loader.aborted++; }
      if (img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
    },
    pump(v = grid.view()) {
      // Flung past, a tile gets no request: the rows on screen a moment later are what counts.
      const now = performance.now();
      if (last && now > last.time && Math.abs(v.top - last.top) / (now - last.time) > FAST) fastUntil = now + SETTLE;
      last = { top: v.top, time: now };
      const near = (img) => {
        const top = img.tile ? img.tile.top : 0;
        return top + grid.tile >= v.top - LOAD_MARGIN && top <= v.bottom + LOAD_MARGIN;
      };
      for (const [img, controller] of running) {
        if (!near(img)) {  // scrolled past before served: asked again when it comes back
          controller.abort();
          running.delete(img);
          waiting.add(img);
          loader.aborted++;
        }
      }
      if (running.size >= inFlight() || !waiting.size) return;
      if (now < fastUntil) {
        clearTimeout(settle);
        settle = setTimeout(() => loader.pump(), fastUntil - now + 5);
        return;
      }
      const candidates = [...waiting].filter(near);
      // The visible ones first, from the top of the window; then the margins.
      const distance = (img) => {
        const top = img.tile ? img.tile.top : 0;
        const visible = top + grid.tile >= v.top && top <= v.bottom;
        return visible ? top - v.top : 1e6 + Math.abs(top - v.top);
      };
      candidates.sort((a, b) => distance(a) - distance(b));
      for (const img of candidates) {
        if (running.size >= inFlight()) break;
        waiting.delete(img);
        start(img);
      }
    },
  };
  function start(img) {
    const controller = new AbortController();
    running.set(img, controller);
    loader.requested++;
    fetch(img.dataset.src, { signal: controller.signal }).then(async (response) => {
      if (!response.ok) {
        const error = new Error(String(response.status));
        error.refused = true;  // the server cannot make one (a raw file without a preview ...)
        throw error;
      }
      const blob = await response.blob();
      if (running.get(img) !== controller) return;
      running.delete(img);
      img.src = URL.createObjectURL(blob);
      img.removeAttribute('data-src');
      loader.pump();
    }).catch((error) => {
      if (running.get(img) !== controller) return;  // aborted: dropped or requeued
      running.delete(img);
      if (error.refused) {
        failed(img);
      } else if (error.name !== 'AbortError' && (img.tries = (img.tries || 0) + 1) < 3) {
        // The connection failed (a server restarting, a network changing): asked again later.
        setTimeout(() => { if (img.isConnected) { waiting.add(img); loader.pump(); } }, 500 * img.tries);
      }
      loader.pump();
    });
  }
  grid.loader = loader;
  return loader;
}
