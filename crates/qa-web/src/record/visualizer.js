// ui-qa interaction visualizer. Runs in its own isolated world in every
// frame of a recorded page, before any page script. It only listens
// (capture phase, passive; it never cancels, stops or re-dispatches an
// event) and draws into a closed shadow root that is hidden from
// accessibility and transparent to the pointer. Every mark removes itself
// within 650 ms and never moves: the run does not wait for it (the video holds each
// step's result instead), so a mark lives long enough to stay readable
// when a step is slow to settle. The host's `data-marks` says how many are
// live, so a picture can wait for them to clear (the settle's mutation
// count ignores the host).
(() => {
  if (window.__uiQaVisualizer) return;
  window.__uiQaVisualizer = true;
  const PINK = '#ff00aa';
  const LIFE = 600;
  const DRAG = 650;
  let host = null;
  let root = null;
  let live = 0;
  function count(d) {
    live = Math.max(0, live + d);
    if (host) host.setAttribute('data-marks', String(live));
  }
  function layer() {
    const doc = document.documentElement;
    if (!doc) return null;
    if (host && host.isConnected) return root;
    host = document.createElement('ui-qa-visualizer');
    host.setAttribute('aria-hidden', 'true');
    host.inert = true;
    host.style.cssText =
      'all:initial;position:fixed;inset:0;z-index:2147483647;pointer-events:none;contain:strict;display:block;';
    root = host.attachShadow({ mode: 'closed' });
    const css = document.createElement('style');
    css.textContent =
      '*{pointer-events:none;box-sizing:border-box}' +
      '.dot{position:fixed;width:14px;height:14px;margin:-7px 0 0 -7px;border-radius:50%;background:' + PINK + ';box-shadow:0 0 0 2px #fff,0 0 0 3px #000}' +
      '.ring{position:fixed;width:40px;height:40px;margin:-20px 0 0 -20px;border-radius:50%;border:4px solid ' + PINK + '}' +
      '.cursor{position:fixed;width:0;height:0}' +
      '.cursor svg{position:absolute;left:-2px;top:-2px}' +
      '.box{position:fixed;border:3px solid ' + PINK + ';border-radius:4px;box-shadow:0 0 0 1px #fff}' +
      '.key{position:absolute;right:-3px;top:-22px;background:' + PINK + ';color:#fff;font:bold 12px/18px sans-serif;padding:0 6px;border-radius:3px}' +
      '.drop{position:fixed;width:22px;height:22px;margin:-11px 0 0 -11px;background:' + PINK + ';transform:rotate(45deg);box-shadow:0 0 0 2px #fff,0 0 0 3px #000}';
    root.appendChild(css);
    doc.appendChild(host);
    return root;
  }
  function el(cls, x, y) {
    const r = layer();
    if (!r) return null;
    const e = document.createElement('div');
    e.className = cls;
    e.style.left = x + 'px';
    e.style.top = y + 'px';
    r.appendChild(e);
    return e;
  }
  // A mark is still: it appears, stays `ms` and goes. Nothing moves in
  // between, so the page sends the recording two pictures per mark, not
  // one per animation frame (each one a JPEG for the browser to encode,
  // for ui-qa to decode and for the encoder to compress).
  function show(e, ms) {
    if (!e) return;
    count(1);
    let gone = false;
    setTimeout(() => {
      if (gone) return;
      gone = true;
      e.remove();
      count(-1);
    }, ms);
  }
  const ARROW =
    '<svg xmlns="http://www.w3.org/2000/svg" width="SIZE" height="SIZE" viewBox="0 0 16 16"><path d="M1 1 L1 13 L4.5 9.8 L7 15 L9 14 L6.6 8.9 L11 8.9 Z" fill="#000" stroke="#fff" stroke-width="1.2" stroke-linejoin="round"/></svg>';
  function cursor(x, y, size) {
    const c = el('cursor', x, y);
    if (c) c.innerHTML = ARROW.replace(/SIZE/g, String(size));
    return c;
  }
  function pulse(x, y) {
    show(el('dot', x, y), LIFE);
    show(el('ring', x, y), LIFE);
    show(cursor(x, y, 22), LIFE);
  }
  // Drags: the points the pointer (or an intercepted HTML5 drag) went through.
  let drag = null;
  function point(ev) {
    return [ev.clientX, ev.clientY];
  }
  function drawDrag(path) {
    const r = layer();
    if (!r || path.length < 2) return;
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', String(innerWidth));
    svg.setAttribute('height', String(innerHeight));
    svg.style.cssText = 'position:fixed;left:0;top:0;overflow:visible';
    const d = path.map((p, i) => (i ? 'L' : 'M') + p[0] + ' ' + p[1]).join(' ');
    for (const [w, c] of [[9, '#fff'], [5, PINK]]) {
      const line = document.createElementNS(NS, 'path');
      line.setAttribute('d', d);
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', c);
      line.setAttribute('stroke-width', String(w));
      line.setAttribute('stroke-linecap', 'round');
      line.setAttribute('stroke-linejoin', 'round');
      svg.appendChild(line);
    }
    r.appendChild(svg);
    show(svg, DRAG);
    const end = path[path.length - 1];
    show(cursor(end[0], end[1], 36), DRAG);
    show(el('drop', end[0], end[1]), DRAG);
  }
  function endDrag(ev) {
    if (!drag) return;
    if (ev) drag.push(point(ev));
    const path = drag;
    drag = null;
    const [x0, y0] = path[0];
    const [x1, y1] = path[path.length - 1];
    if (Math.hypot(x1 - x0, y1 - y0) > 8) drawDrag(path);
  }
  const opts = { capture: true, passive: true };
  addEventListener(
    'pointerdown',
    (ev) => {
      pulse(ev.clientX, ev.clientY);
      drag = [point(ev)];
    },
    opts,
  );
  addEventListener(
    'pointermove',
    (ev) => {
      if (drag && ev.buttons) drag.push(point(ev));
    },
    opts,
  );
  addEventListener('pointerup', (ev) => endDrag(ev), opts);
  addEventListener(
    'dragover',
    (ev) => {
      if (drag) drag.push(point(ev));
    },
    opts,
  );
  addEventListener('drop', (ev) => endDrag(ev), opts);
  addEventListener('dragend', () => endDrag(null), opts);
  addEventListener('dblclick', (ev) => pulse(ev.clientX, ev.clientY), opts);
  // Typing: outline the element that received it.
  let lastBox = 0;
  function typed(ev) {
    const t = ev.composedPath ? ev.composedPath()[0] : ev.target;
    if (!t || !t.getBoundingClientRect) return;
    const now = performance.now();
    if (now - lastBox < 120) return;
    lastBox = now;
    const b = t.getBoundingClientRect();
    const e = el('box', b.left - 3, b.top - 3);
    if (!e) return;
    e.style.width = b.width + 6 + 'px';
    e.style.height = b.height + 6 + 'px';
    const k = document.createElement('div');
    k.className = 'key';
    k.textContent = '\u2328';
    e.appendChild(k);
    show(e, LIFE);
  }
  addEventListener('input', typed, opts);
  addEventListener('keydown', typed, opts);
})();
