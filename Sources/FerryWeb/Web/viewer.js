// The viewer: a progressive image (the grid's thumbnail at once, marked as a preview; then a
// preview the server fits to this screen; the original only when the zoom needs more pixels),
// zoom and pan, keys, swipe, a "3 / 204" counter, the information panel (i), and prefetch of the
// neighbours after a moment on an image. Videos play in the browser's <video>.
import { apiURL, fileURL, thumbURL, tracked, version, api } from './api.js';
import { $, element, ferry, formatSize } from './util.js';
import { state } from './state.js';
import { folderURL, visibleEntries } from './entries.js';

export const viewer = {
  open: false,
  entry: null,
  token: 0,            // one per open: a late answer for an image left behind is dropped
  abort: null,
  objectURL: null,
  pushed: false,       // whether opening pushed a history entry (closing then goes back)
  width: 0, height: 0, // size of the original image as shown, turned by its Exif orientation (the zoom's 100%)
  level: null,         // 'preview' or 'original': what the image element holds
  pixels: 0,           // width in pixels of what the image element holds
  originalLoading: false,
  prefetchTimer: 0,
  info: false,         // whether the information panel is open
  zoom: 1, x: 0, y: 0,
  pointers: new Map(),
  gesture: null,
};

const MAX_ZOOM = 4;
const PREFETCH_AFTER = 500;  // ms on an image before its neighbours are fetched

function viewable(e) {
  return e.image || e.media === 'video';
}

function images() {
  return visibleEntries().filter(viewable);
}

function previewURL(entry) {
  const { w, h } = stageSize();
  const dpr = window.devicePixelRatio || 1;
  return apiURL('preview', {
    path: entry.path, w: String(Math.round(w * dpr)), h: String(Math.round(h * dpr)), v: version(entry),
  });
}

export function openViewer(entry, { history: mode = 'push' } = {}) {
  const wasOpen = viewer.open;
  viewer.open = true;
  $('viewer').hidden = false;
  if (mode === 'push' && !wasOpen) {
    history.pushState({ path: state.folder, image: entry.name }, '', folderURL(state.folder, entry.name));
    viewer.pushed = true;
  } else if (mode === 'push' || mode === 'replace') {
    history.replaceState({ path: state.folder, image: entry.name }, '', folderURL(state.folder, entry.name));
  }
  loadImage(entry);
}

async function failText(response) {
  let text = `${response.status} ${response.statusText}`;
  try { text = (await response.json()).error || text; } catch (_) { /* not JSON */ }
  return text;
}

function loadImage(entry) {
  const token = ++viewer.token;
  viewer.entry = entry;
  if (viewer.abort) viewer.abort.abort();
  clearTimeout(viewer.prefetchTimer);
  const controller = new AbortController();
  viewer.abort = controller;
  viewer.level = null;
  viewer.originalLoading = false;
  const v = $('viewer');
  v.classList.add('loading');
  v.dataset.name = entry.name;
  // A video has the browser's own controls: the zoom buttons go (app.css).
  v.dataset.media = entry.media === 'video' ? 'video' : 'image';
  v.dataset.loaded = 'false';
  v.dataset.level = '';
  $('spinner').hidden = false;
  $('viewer-progress').hidden = true;
  $('viewer-error').hidden = true;
  $('viewer-title').textContent = entry.name;
  document.title = `${entry.name} — Ferry`;
  $('viewer-download').href = fileURL(entry, true);
  $('viewer-download').setAttribute('download', entry.name);
  const list = images();
  const index = list.findIndex((e) => e.path === entry.path);
  $('prev').disabled = index <= 0;
  $('next').disabled = index < 0 || index >= list.length - 1;
  $('viewer-counter').textContent = index >= 0 ? `${index + 1} / ${list.length}` : '';
  if (viewer.info) loadInfo(entry, token);
  const video = $('viewer-video');
  const img = $('viewer-image');
  const placeholder = $('viewer-preview');
  if (entry.media === 'video') {
    img.hidden = true;
    placeholder.hidden = true;
    video.hidden = false;
    video.src = fileURL(entry);
    $('spinner').hidden = true;
    v.classList.remove('loading');
    v.dataset.loaded = 'true';
    return;
  }
  video.hidden = true;
  video.removeAttribute('src');
  img.hidden = false;
  // At once: the thumbnail the grid has (from the browser's cache), scaled up and marked.
  if (entry.thumbnail) {
    placeholder.src = thumbURL(entry, state.thumbSide);  // the grid's URL: from the cache
    placeholder.hidden = false;
  } else {
    placeholder.hidden = true;
  }

  (async () => {
    let response;
    if (entry.thumbnail) {
      response = await tracked(previewURL(entry), { signal: controller.signal });
      if (!response.ok && entry.media === 'raw') throw new Error(await failText(response));
      if (!response.ok) response = null;  // not a JPEG the server can read: the original
    }
    let level = 'preview';
    let total = 0;
    if (!response) {
      level = 'original';
      response = await tracked(fileURL(entry), { signal: controller.signal });
      if (!response.ok) throw new Error(await failText(response));
    }
    const ow = Number(response.headers.get('X-Image-Width')) || 0;
    const oh = Number(response.headers.get('X-Image-Height')) || 0;
    total = Number(response.headers.get('Content-Length')) || 0;
    const blob = level === 'original' ? await readWithProgress(response, total, token) : await response.blob();
    if (token !== viewer.token) return;
    await show(entry, token, blob, level, ow, oh);
    viewer.prefetchTimer = setTimeout(() => prefetch(entry, token), PREFETCH_AFTER);
  })().catch((error) => {
    if (token !== viewer.token || error.name === 'AbortError') return;
    $('spinner').hidden = true;
    $('viewer-preview').hidden = true;
    $('viewer-error').textContent = `Cannot show ${entry.name}: ${error.message}`;
    $('viewer-error').hidden = false;
  });
}

/** Reads a response body, showing the percentage received. */
async function readWithProgress(response, total, token) {
  if (!response.body || !total) return response.blob();
  const reader = response.body.getReader();
  const chunks = [];
  let received = 0;
  const progress = $('viewer-progress');
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    if (token === viewer.token) {
      progress.hidden = false;
      progress.textContent = `${Math.floor((received / total) * 100)}% of ${formatSize(total)}`;
      progress.dataset.percent = String(Math.floor((received / total) * 100));
    }
  }
  if (token === viewer.token) progress.hidden = true;
  return new Blob(chunks, { type: response.headers.get('Content-Type') || '' });
}

async function show(entry, token, blob, level, ow, oh) {
  const url = URL.createObjectURL(blob);
  const probe = new Image();
  probe.src = url;
  await probe.decode();
  if (token !== viewer.token) { URL.revokeObjectURL(url); return; }
  const img = $('viewer-image');
  const first = viewer.level === null;
  img.src = url;
  img.alt = entry.name;
  img.dataset.name = entry.name;
  if (viewer.objectURL) URL.revokeObjectURL(viewer.objectURL);
  viewer.objectURL = url;
  viewer.level = level;
  // Upright widths all: the server's previews are turned, its X-Image-* sizes are as shown, and the
  // browser turns the original by its Exif orientation (image-orientation: from-image) before
  // reporting naturalWidth.
  viewer.pixels = probe.naturalWidth;
  const v = $('viewer');
  v.dataset.level = level;
  if (first) {
    viewer.width = ow || probe.naturalWidth;
    viewer.height = oh || probe.naturalHeight;
    v.dataset.imageWidth = String(viewer.width);
    v.dataset.imageHeight = String(viewer.height);
    img.style.width = `${viewer.width}px`;
    img.style.height = `${viewer.height}px`;
    fit();
  }
  $('spinner').hidden = true;
  $('viewer-preview').hidden = true;
  v.classList.remove('loading');
  v.dataset.loaded = 'true';
  if (first) ferry.shown.push(entry.name);
  applyTransform();
}

/** The original, once a zoom needs more pixels than the preview has. */
function maybeLoadOriginal() {
  if (viewer.level !== 'preview' || viewer.originalLoading || !viewer.entry) return;
  if (viewer.entry.media === 'raw') return;  // the browser cannot show a raw file: its preview is all there is
  const needed = viewer.width * viewer.zoom * (window.devicePixelRatio || 1);
  if (needed <= viewer.pixels * 1.05) return;
  viewer.originalLoading = true;
  const entry = viewer.entry;
  const token = viewer.token;
  const signal = viewer.abort ? viewer.abort.signal : undefined;
  (async () => {
    const response = await tracked(fileURL(entry), { signal });
    if (!response.ok) throw new Error(await failText(response));
    const total = Number(response.headers.get('Content-Length')) || 0;
    const blob = await readWithProgress(response, total, token);
    if (token !== viewer.token) return;
    await show(entry, token, blob, 'original', viewer.width, viewer.height);
  })().catch(() => { if (token === viewer.token) $('viewer-progress').hidden = true; });
}

/**
 * Fetches the neighbours' previews into the browser's cache, after the person stayed a moment: at
 * the server's prefetch priority (below the page's requests, above an import).
 */
function prefetch(entry, token) {
  if (token !== viewer.token || !viewer.open || ferry.prefetch === false) return;
  const list = images();
  const index = list.findIndex((e) => e.path === entry.path);
  // The next one first, then the previous one: asked together, the card (one request at a
  // time) served whichever reached the server first, the previous photo half the time.
  (async () => {
    for (const near of [list[index + 1], list[index - 1]]) {
      if (!near || !near.thumbnail || token !== viewer.token) continue;
      // The same URL as the viewer's own request (the browser's cache answers it then); the
      // header tells the server it goes after the page's requests and before an import.
      try {
        const response = await fetch(previewURL(near), { priority: 'low', headers: { 'X-Ferry-Priority': 'prefetch' } });
        await response.blob();
      } catch (_) { /* a neighbour that cannot be shown now says so when opened */ }
    }
  })();
}

async function loadInfo(entry, token) {
  const panel = $('viewer-info');
  panel.replaceChildren(element('p', { class: 'muted', text: 'Reading…' }));
  try {
    const info = await api('info', { params: { path: entry.path, v: version(entry) }, quiet: true });
    if (token !== viewer.token) return;
    const rows = [
      ['Taken', info.taken], ['Camera', info.camera], ['Lens', info.lens], ['Shutter', info.shutter],
      ['Aperture', info.aperture], ['ISO', info.iso], ['Focal length', info.focalLength],
      ['Pixels', info.width ? `${info.width} × ${info.height}` : null], ['Size', formatSize(info.size)],
    ];
    const list = element('dl');
    for (const [k, value] of rows) {
      list.append(element('dt', { text: k }), element('dd', { text: value == null || value === '' ? '—' : String(value), dataset: { field: k } }));
    }
    panel.replaceChildren(element('h2', { text: entry.name }), list);
  } catch (error) {
    if (token === viewer.token) panel.replaceChildren(element('p', { class: 'error', text: error.message }));
  }
}

function toggleInfo() {
  viewer.info = !viewer.info;
  $('viewer-info').hidden = !viewer.info;
  if (viewer.info && viewer.entry) loadInfo(viewer.entry, viewer.token);
}

export function closeViewer({ history: mode = 'auto' } = {}) {
  if (!viewer.open) return;
  if (mode === 'auto') {
    if (viewer.pushed) {
      history.back();  // popstate closes the viewer
      return;
    }
    history.replaceState({ path: state.folder }, '', folderURL(state.folder));
  }
  viewer.open = false;
  viewer.pushed = false;
  viewer.token++;
  clearTimeout(viewer.prefetchTimer);
  if (viewer.abort) viewer.abort.abort();
  $('viewer').hidden = true;
  const img = $('viewer-image');
  img.removeAttribute('src');
  img.dataset.name = '';
  $('viewer-video').pause();
  $('viewer-video').removeAttribute('src');
  if (viewer.objectURL) URL.revokeObjectURL(viewer.objectURL);
  viewer.objectURL = null;
  renderFolderTitle();
}

function renderFolderTitle() {
  const path = state.folder || '/';
  const name = (state.source && state.source.name) || 'Ferry';
  document.title = path === '/' ? `${name} — Ferry` : `${path.split('/').pop()} — Ferry`;
}

function step(delta) {
  if (!viewer.entry) return;
  const list = images();
  const index = list.findIndex((e) => e.path === viewer.entry.path);
  const next = list[index + delta];
  if (index < 0 || !next) return;
  openViewer(next, { history: 'replace' });
}

// Zoom and pan: the image is placed with translate(x, y) scale(zoom), origin top left.

function stageSize() {
  const stage = $('stage');
  return { w: stage.clientWidth, h: stage.clientHeight };
}

function fitZoom() {
  if (!viewer.width) return 1;
  const { w, h } = stageSize();
  return Math.min(1, w / viewer.width, h / viewer.height);
}

function zoomBounds() {
  const fitted = fitZoom();
  return { min: Math.min(0.2, fitted), max: Math.max(MAX_ZOOM, fitted) };
}

function fit() {
  const zoom = fitZoom();
  const { w, h } = stageSize();
  viewer.zoom = zoom;
  viewer.x = (w - viewer.width * zoom) / 2;
  viewer.y = (h - viewer.height * zoom) / 2;
  applyTransform();
}

/** Zooms to `zoom` keeping the stage point (cx, cy) where it is. */
function zoomTo(zoom, cx, cy) {
  if (!viewer.width) return;
  const { min, max } = zoomBounds();
  const z = Math.min(max, Math.max(min, zoom));
  if (cx === undefined) {
    const { w, h } = stageSize();
    cx = w / 2;
    cy = h / 2;
  }
  const ix = (cx - viewer.x) / viewer.zoom;
  const iy = (cy - viewer.y) / viewer.zoom;
  viewer.zoom = z;
  viewer.x = cx - ix * z;
  viewer.y = cy - iy * z;
  applyTransform();
}

function panBy(dx, dy) {
  viewer.x += dx;
  viewer.y += dy;
  applyTransform();
}

/** Keeps the image on screen: centred along an axis where it is smaller than the stage, else covering it. */
function clampPan() {
  const { w, h } = stageSize();
  const iw = viewer.width * viewer.zoom;
  const ih = viewer.height * viewer.zoom;
  viewer.x = iw <= w ? (w - iw) / 2 : Math.min(0, Math.max(w - iw, viewer.x));
  viewer.y = ih <= h ? (h - ih) / 2 : Math.min(0, Math.max(h - ih, viewer.y));
}

function applyTransform() {
  clampPan();
  const img = $('viewer-image');
  img.style.transform = `translate(${viewer.x}px, ${viewer.y}px) scale(${viewer.zoom})`;
  const v = $('viewer');
  const { min, max } = zoomBounds();
  v.dataset.zoom = String(Math.round(viewer.zoom * 10000) / 10000);
  v.dataset.zoomMin = String(Math.round(min * 10000) / 10000);
  v.dataset.zoomMax = String(max);
  v.dataset.fit = String(Math.round(fitZoom() * 10000) / 10000);
  v.dataset.panX = String(Math.round(viewer.x));
  v.dataset.panY = String(Math.round(viewer.y));
  $('zoom-level').textContent = `${Math.round(viewer.zoom * 100)}%`;
  $('zoom-in').disabled = viewer.zoom >= max - 1e-6;
  $('zoom-out').disabled = viewer.zoom <= min + 1e-6;
  maybeLoadOriginal();
}

function stagePoint(event) {
  const r = $('stage').getBoundingClientRect();
  return { x: event.clientX - r.left, y: event.clientY - r.top };
}

export function bindViewer() {
  const stage = $('stage');
  $('close').onclick = () => closeViewer();
  $('prev').onclick = () => step(-1);
  $('next').onclick = () => step(1);
  $('zoom-in').onclick = () => zoomTo(viewer.zoom * 1.25);
  $('zoom-out').onclick = () => zoomTo(viewer.zoom / 1.25);
  $('zoom-fit').onclick = () => fit();
  $('info').onclick = () => toggleInfo();
  stage.addEventListener('wheel', (event) => {
    event.preventDefault();
    const p = stagePoint(event);
    const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    zoomTo(viewer.zoom * Math.exp(-delta * 0.0015), p.x, p.y);
  }, { passive: false });
  stage.addEventListener('dblclick', (event) => {
    const p = stagePoint(event);
    if (Math.abs(viewer.zoom - fitZoom()) < 0.01) zoomTo(1, p.x, p.y);
    else fit();
  });
  stage.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 && event.pointerType === 'mouse') return;
    stage.setPointerCapture(event.pointerId);
    viewer.pointers.set(event.pointerId, stagePoint(event));
    stage.classList.add('dragging');
    if (viewer.pointers.size === 1) {
      const p = stagePoint(event);
      viewer.gesture = { startX: p.x, startY: p.y, time: performance.now(), zoomAtStart: viewer.zoom, pinched: false };
    } else if (viewer.pointers.size === 2) {
      const [a, b] = [...viewer.pointers.values()];
      viewer.gesture = { ...(viewer.gesture || {}), pinched: true, distance: Math.hypot(a.x - b.x, a.y - b.y), zoom: viewer.zoom };
    }
  });
  stage.addEventListener('pointermove', (event) => {
    if (!viewer.pointers.has(event.pointerId)) return;
    const previous = viewer.pointers.get(event.pointerId);
    const p = stagePoint(event);
    viewer.pointers.set(event.pointerId, p);
    if (viewer.pointers.size === 1) {
      panBy(p.x - previous.x, p.y - previous.y);
    } else if (viewer.pointers.size === 2 && viewer.gesture && viewer.gesture.distance) {
      const [a, b] = [...viewer.pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      zoomTo(viewer.gesture.zoom * distance / viewer.gesture.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
    }
  });
  const end = (event) => {
    if (!viewer.pointers.has(event.pointerId)) return;
    viewer.pointers.delete(event.pointerId);
    if (viewer.pointers.size > 0) return;
    stage.classList.remove('dragging');
    const g = viewer.gesture;
    viewer.gesture = null;
    if (!g || g.pinched || event.type === 'pointercancel') return;
    // A quick horizontal swipe on an image that fits the window turns the page.
    const p = stagePoint(event);
    const dx = p.x - g.startX;
    const dy = p.y - g.startY;
    const fitted = g.zoomAtStart <= fitZoom() + 1e-3;
    if (fitted && Math.abs(dx) > 60 && Math.abs(dy) < Math.abs(dx) * 0.6 && performance.now() - g.time < 800) {
      step(dx < 0 ? 1 : -1);
    }
  };
  stage.addEventListener('pointerup', end);
  stage.addEventListener('pointercancel', end);
  window.addEventListener('resize', () => { if (viewer.open && viewer.width) fit(); });
  document.addEventListener('keydown', (event) => {
    if (!viewer.open || $('dialog').open) return;
    switch (event.key) {
      case 'Escape': closeViewer(); break;
      case 'ArrowLeft': step(-1); break;
      case 'ArrowRight': step(1); break;
      case '+': case '=': zoomTo(viewer.zoom * 1.25); break;
      case '-': case '_': zoomTo(viewer.zoom / 1.25); break;
      case '0': fit(); break;
      case 'i': case 'I': toggleInfo(); break;
      default: return;
    }
    event.preventDefault();
  });
}

