// ui-qa in-page helper: locator resolution (role, accessible name, label,
// placeholder, text, test id, css), actionability checks, element state and
// readiness. Evaluated fresh on every call (no state left in the page except
// a mutation counter, and the secret masks between maskShow and maskHide),
// called as (op, spec, arg) and returning plain JSON.
async (op, spec, arg) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  // A text cut for a message ends in the clip mark, so that redaction in
  // the runner knows it was cut (and never leaves the start of a secret).
  const cut = (s, n) => (s.length > n ? s.slice(0, n) + '\u2026' : s);
  const matchText = (actual, want, exact) => {
    actual = norm(actual);
    if (exact) return actual === norm(want);
    return actual.toLowerCase().includes(norm(want).toLowerCase());
  };
  const style = (e) => e.ownerDocument.defaultView.getComputedStyle(e);
  const all = () => {
    const out = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll('*')) {
        out.push(e);
        if (e.shadowRoot) walk(e.shadowRoot);
      }
    };
    walk(document);
    return out;
  };
  const isVisible = (e) => {
    if (!e.isConnected) return false;
    if (e.checkVisibility && !e.checkVisibility({ visibilityProperty: true, opacityProperty: false })) return false;
    const r = e.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) {
      // display:contents and zero-size wrappers count if a child is visible
      if (style(e).display === 'contents') return [...e.children].some(isVisible);
      return false;
    }
    return style(e).visibility !== 'hidden';
  };
  const hiddenFromAX = (e) => {
    for (let n = e; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host)) {
      if (n.nodeType !== 1) continue;
      if (n.getAttribute('aria-hidden') === 'true') return true;
      if (n.hidden || n.tagName === 'TEMPLATE') return true;
      const s = style(n);
      if (s.display === 'none') return true;
      if (n === e && s.visibility === 'hidden') return true;
    }
    return false;
  };
  const inputRole = (e) => {
    const t = (e.getAttribute('type') || 'text').toLowerCase();
    if (['button', 'submit', 'reset', 'image'].includes(t)) return 'button';
    if (t === 'checkbox') return 'checkbox';
    if (t === 'radio') return 'radio';
    if (t === 'range') return 'slider';
    if (t === 'number') return 'spinbutton';
    if (t === 'hidden') return null;
    if (e.hasAttribute('list')) return 'combobox';
    if (t === 'search') return 'searchbox';
    return 'textbox';
  };
  const hasOwnName = (e) => !!(norm(e.getAttribute('aria-label')) || e.getAttribute('aria-labelledby') || norm(e.getAttribute('title')));
  const roleOf = (e) => {
    const explicit = (e.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit && explicit !== 'none' && explicit !== 'presentation') return explicit;
    if (explicit) return 'none';
    const t = e.tagName.toLowerCase();
    switch (t) {
      case 'a': case 'area': return e.hasAttribute('href') ? 'link' : null;
      case 'button': return 'button';
      case 'input': return inputRole(e);
      case 'select': return (e.multiple || e.size > 1) ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'img': return e.getAttribute('alt') === '' ? 'none' : 'img';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return 'listitem';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'aside': return 'complementary';
      case 'header': return e.closest('article,aside,main,nav,section') ? null : 'banner';
      case 'footer': return e.closest('article,aside,main,nav,section') ? null : 'contentinfo';
      case 'form': return hasOwnName(e) ? 'form' : null;
      case 'section': return hasOwnName(e) ? 'region' : null;
      case 'article': return 'article';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': return 'columnheader';
      case 'thead': case 'tbody': case 'tfoot': return 'rowgroup';
      case 'dialog': return 'dialog';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'fieldset': case 'details': case 'optgroup': return 'group';
      case 'summary': return 'button';
      case 'hr': return 'separator';
      case 'output': return 'status';
      case 'p': return 'paragraph';
      case 'dl': return 'list';
      case 'label': return null;
      case 'textarea': return 'textbox';
    }
    if (e.isContentEditable && e.getAttribute('contenteditable') !== null) return 'textbox';
    return null;
  };
  const nameFromContent = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader',
    'checkbox', 'radio', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
    'treeitem', 'switch', 'tooltip', 'row', 'listitem', 'gridcell', 'legend', 'paragraph']);
  // The text of `e` for a name; `self` (a control named by the label it is
  // in) does not name itself with its own value.
  const textOf = (e, depth, self) => {
    if (depth > 20) return '';
    let out = '';
    const kids = e.shadowRoot ? e.shadowRoot.childNodes : e.childNodes;
    for (const n of kids) {
      if (n.nodeType === 3) out += n.textContent;
      else if (n.nodeType === 1) {
        if (n === self) continue;
        if (n.tagName === 'SLOT') { for (const a of n.assignedNodes()) out += a.nodeType === 3 ? a.textContent : textOf(a, depth + 1, self); continue; }
        if (hiddenFromAX(n)) continue;
        if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(n.tagName)) continue;
        const lab = n.getAttribute('aria-label');
        if (lab) { out += ' ' + lab + ' '; continue; }
        if (n.tagName === 'IMG') { out += ' ' + (n.getAttribute('alt') || '') + ' '; continue; }
        // An embedded field names with its value, a button with its own
        // name; a checkbox, radio, file or password input adds nothing.
        if (n.tagName === 'INPUT') {
          const r = inputRole(n);
          const quiet = ['checkbox', 'radio', null].includes(r) || ['file', 'password'].includes((n.type || '').toLowerCase());
          out += ' ' + (r === 'button' ? accName(n) : quiet ? '' : (n.value || '')) + ' ';
          continue;
        }
        const block = style(n).display;
        const sep = (block === 'inline' || block === 'contents') ? '' : ' ';
        out += sep + textOf(n, depth + 1, self) + sep;
      }
    }
    return out;
  };
  const byIds = (e, attr) => {
    const ids = (e.getAttribute(attr) || '').split(/\s+/).filter(Boolean);
    const root = e.getRootNode();
    return ids.map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id))).filter(Boolean);
  };
  function accName(e) {
    const lb = byIds(e, 'aria-labelledby');
    if (lb.length) return norm(lb.map((x) => x.getAttribute('aria-label') || textOf(x, 0)).join(' '));
    const al = e.getAttribute('aria-label');
    if (al && norm(al)) return norm(al);
    const t = e.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT' || t === 'METER' || t === 'PROGRESS' || t === 'OUTPUT') {
      const type = (e.getAttribute('type') || '').toLowerCase();
      if (t === 'INPUT' && ['button', 'submit', 'reset'].includes(type)) {
        return norm(e.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
      }
      if (t === 'INPUT' && type === 'image') return norm(e.getAttribute('alt') || 'Submit');
      if (e.labels && e.labels.length) return norm([...e.labels].map((l) => textOf(l, 0, e)).join(' '));
      return norm(e.getAttribute('title') || e.getAttribute('placeholder') || '');
    }
    if (t === 'IMG' || t === 'AREA') return norm(e.getAttribute('alt') || e.getAttribute('title') || '');
    if (t === 'FIELDSET') { const lg = e.querySelector(':scope > legend'); if (lg) return norm(textOf(lg, 0)); }
    if (t === 'TABLE') { const c = e.querySelector(':scope > caption'); if (c) return norm(textOf(c, 0)); }
    const role = roleOf(e);
    if (role && nameFromContent.has(role)) { const s = norm(textOf(e, 0)); if (s) return s; }
    return norm(e.getAttribute('title') || '');
  }
  const labelTexts = (e) => {
    const out = [];
    if (e.labels) for (const l of e.labels) out.push(textOf(l, 0, e));
    const lb = byIds(e, 'aria-labelledby');
    if (lb.length) out.push(lb.map((x) => textOf(x, 0)).join(' '));
    const al = e.getAttribute('aria-label');
    if (al) out.push(al);
    return out;
  };
  const ownText = (e) => {
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'TITLE', 'HTML'].includes(e.tagName)) return null;
    if (e.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes((e.type || '').toLowerCase())) return e.value;
    return e.innerText !== undefined ? e.innerText : e.textContent;
  };
  const resolve = (s) => {
    let found;
    if (s.testId !== undefined) {
      found = all().filter((e) => e.getAttribute('data-testid') === s.testId);
    } else if (s.css !== undefined) {
      const out = [];
      const walk = (root) => {
        for (const e of root.querySelectorAll(s.css)) out.push(e);
        for (const e of root.querySelectorAll('*')) if (e.shadowRoot) walk(e.shadowRoot);
      };
      walk(document);
      found = out;
    } else if (s.role !== undefined) {
      found = all().filter((e) => roleOf(e) === s.role && !hiddenFromAX(e) &&
        (s.name === undefined || matchText(accName(e), s.name, s.exact)));
    } else if (s.label !== undefined) {
      found = all().filter((e) => labelTexts(e).some((t) => matchText(t, s.label, s.exact)));
    } else if (s.placeholder !== undefined) {
      found = all().filter((e) => e.hasAttribute('placeholder') && matchText(e.getAttribute('placeholder'), s.placeholder, s.exact));
    } else if (s.text !== undefined) {
      const m = all().filter((e) => { const t = ownText(e); return t !== null && isVisible(e) && matchText(t, s.text, s.exact); });
      // Keep the innermost matches only.
      const set = new Set(m);
      found = m.filter((e) => ![...e.children].some((c) => set.has(c)));
    } else {
      found = [];
    }
    if (s.nth !== undefined) return { list: found[s.nth] ? [found[s.nth]] : [], total: found.length };
    return { list: found, total: found.length };
  };
  const describe = (e) => {
    if (!e) return 'nothing';
    let d = e.tagName.toLowerCase();
    if (e.id) d += '#' + e.id;
    const cls = (typeof e.className === 'string' ? e.className : '').trim().split(/\s+/).filter(Boolean).slice(0, 3);
    if (cls.length) d += '.' + cls.join('.');
    return d;
  };
  const isDisabled = (e) => {
    const native = ['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'FIELDSET'];
    if (native.includes(e.tagName) && e.disabled) return true;
    if (native.includes(e.tagName)) {
      const fs = e.closest('fieldset[disabled]');
      if (fs) { const lg = fs.querySelector(':scope > legend'); if (!lg || !lg.contains(e)) return true; }
    }
    for (let n = e; n; n = n.parentElement) if (n.getAttribute('aria-disabled') === 'true') return true;
    return false;
  };
  const isEditable = (e) => {
    if (isDisabled(e)) return false;
    if (e.readOnly || e.getAttribute('aria-readonly') === 'true') return false;
    if (e.tagName === 'TEXTAREA' || e.tagName === 'SELECT') return true;
    if (e.tagName === 'INPUT') return !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes((e.type || '').toLowerCase());
    return e.isContentEditable;
  };
  // One animation frame. A page in the background gets none; a timer (not
  // throttled: Chromium runs with background throttling off) stands in so
  // an evaluation can never wait forever.
  const raf = () => new Promise((r) => {
    requestAnimationFrame(() => r());
    setTimeout(r, document.visibilityState === 'visible' ? 250 : 20);
  });
  const checked = (e) => {
    if (e.tagName === 'INPUT' && ['checkbox', 'radio'].includes(e.type)) return e.checked;
    const a = e.getAttribute('aria-checked');
    if (a !== null) return a === 'true';
    const p = e.getAttribute('aria-pressed');
    if (p !== null) return p === 'true';
    return null;
  };
  const single = () => {
    const r = resolve(spec);
    if (r.list.length === 0) return { status: 'none', total: r.total };
    if (r.list.length > 1) return { status: 'ambiguous', count: r.list.length };
    return { status: 'one', el: r.list[0] };
  };
  const hitTarget = (el, x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    for (let n = hit; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host)) if (n === el) return null;
    return describe(hit);
  };

  if (op === 'act') {
    const s = single();
    if (s.status !== 'one') return s;
    const el = s.el;
    if (!el.isConnected) return { status: 'check', check: 'attached' };
    const needVisible = arg.kind !== 'select' && arg.kind !== 'focus' && arg.kind !== 'rect' && arg.kind !== 'file';
    if (needVisible || arg.kind === 'select') {
      if (!isVisible(el)) return { status: 'check', check: 'visible' };
    }
    if (arg.kind === 'rect') {
      const r = el.getBoundingClientRect();
      return { status: 'ok', x: r.left + scrollX, y: r.top + scrollY, vx: r.left, vy: r.top, w: r.width, h: r.height };
    }
    if (['click', 'hover', 'check', 'dblclick', 'wheel'].includes(arg.kind)) {
      const r0 = el.getBoundingClientRect();
      if (r0.top < 0 || r0.left < 0 || r0.bottom > innerHeight || r0.right > innerWidth) {
        el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      }
      await raf();
      const a = el.getBoundingClientRect();
      await raf();
      const b = el.getBoundingClientRect();
      if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height) return { status: 'check', check: 'stable' };
    }
    if (arg.kind !== 'hover' && arg.kind !== 'wheel' && arg.kind !== 'focus') {
      if (isDisabled(el)) return { status: 'check', check: 'enabled' };
    }
    if (arg.kind === 'file') {
      if (el.tagName !== 'INPUT' || (el.type || '').toLowerCase() !== 'file') return { status: 'error', code: 'not_file_input', error: 'not an <input type=file>' };
      if (arg.count > 1 && !el.multiple) return { status: 'error', code: 'not_multiple', error: 'the file input does not accept multiple files' };
      return { status: 'ok' };
    }
    if (arg.kind === 'fill' && !isEditable(el)) return { status: 'check', check: 'editable' };
    if (arg.kind === 'check' && checked(el) === null) return { status: 'error', error: 'not a checkbox, radio or aria-checked element' };
    if (arg.kind === 'check' && checked(el) === arg.want) return { status: 'ok', noop: true };
    if (['click', 'hover', 'check', 'dblclick', 'wheel'].includes(arg.kind)) {
      const rects = el.getClientRects();
      const r = rects.length ? rects[0] : el.getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      if (arg.kind !== 'wheel') {
        const cover = hitTarget(el, x, y);
        if (cover) return { status: 'check', check: 'receives events', cover };
      }
      return { status: 'ok', x, y, left: r.left, top: r.top, w: r.width, h: r.height };
    }
    if (arg.kind === 'fill') {
      el.focus();
      const type = (el.type || '').toLowerCase();
      if (el.tagName === 'INPUT' && ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(type)) {
        el.value = arg.value;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        return { status: 'ok', direct: true };
      }
      if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') { el.select(); }
      else { const rg = document.createRange(); rg.selectNodeContents(el); const sel = getSelection(); sel.removeAllRanges(); sel.addRange(rg); }
      return { status: 'ok' };
    }
    if (arg.kind === 'focus') { el.focus(); return { status: 'ok' }; }
    if (arg.kind === 'select') {
      if (el.tagName !== 'SELECT') return { status: 'error', error: 'not a <select> element' };
      const opts = [...el.options];
      let idx = -1;
      if (arg.value !== undefined) idx = opts.findIndex((o) => o.value === arg.value);
      else if (arg.label !== undefined) idx = opts.findIndex((o) => norm(o.label) === norm(arg.label));
      else if (arg.index !== undefined) idx = arg.index < opts.length ? arg.index : -1;
      if (idx < 0) return { status: 'check', check: 'option present' };
      if (opts[idx].disabled) return { status: 'check', check: 'option enabled' };
      el.focus();
      el.selectedIndex = idx;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return { status: 'ok' };
    }
    return { status: 'error', error: 'unknown action kind' };
  }
  if (op === 'element') {
    const r = resolve(spec);
    return r.list.length === 1 ? r.list[0] : null;
  }
  if (op === 'state') {
    const r = resolve(spec);
    const out = { count: r.list.length };
    if (r.list.length !== 1) return out;
    const el = r.list[0];
    out.visible = isVisible(el);
    out.enabled = !isDisabled(el);
    out.checked = checked(el);
    if (arg.text) out.text = norm(el.innerText !== undefined ? el.innerText : el.textContent);
    if (arg.textContent) out.textContent = el.textContent;
    if (arg.value) out.value = ('value' in el) ? String(el.value) : (el.isContentEditable ? el.innerText : null);
    if (arg.attribute) out.attribute = el.getAttribute(arg.attribute);
    return out;
  }
  if (op === 'resolved') {
    const r = resolve(spec);
    if (r.list.length !== 1) return null;
    const el = r.list[0];
    const b = el.getBoundingClientRect();
    return { role: roleOf(el), name: cut(accName(el) || '', 200), x: b.x, y: b.y, w: b.width, h: b.height };
  }
  if (op === 'names') {
    // The role and the accessible name role-and-name locators match, of
    // each node passed by reference (`arg.nodes`; null for what is not an
    // element), for the element listings and accessibility snapshots: the
    // names they show are the ones a locator finds. Cut like other page
    // text the driver reads.
    return arg.nodes.map((e) => (e && e.nodeType === 1 ? { role: roleOf(e), name: cut(accName(e), 4096) } : null));
  }
  if (op === 'candidates') {
    // For a failure message: the elements a locator matched (when it
    // matched several) or the closest ones (when it matched none), at most
    // 10, with how many there were.
    const whole = Object.assign({}, spec);
    delete whole.nth;
    // What a locator matches, resolved once per locator (the page does not
    // change during this call; the candidates share locators).
    const memo = new Map();
    const matches = (l) => {
      const k = JSON.stringify(l);
      if (!memo.has(k)) memo.set(k, resolve(l).list);
      return memo.get(k);
    };
    const info = (e) => {
      const name = accName(e);
      const t = ownText(e);
      let text = t === null ? '' : cut(norm(t), 200);
      if (text === name) text = '';
      const bits = [describe(e)];
      if (!isVisible(e)) bits.push('not visible');
      if (isDisabled(e)) bits.push('disabled');
      return { role: roleOf(e), name, text, testId: e.getAttribute('data-testid'), detail: bits.join(', '), locator: unique(e) };
    };
    // A locator a flow could write that finds this element and no other:
    // its test id, role and name (as a substring, then exact), label,
    // placeholder, text, then an id or a class. When each of them also
    // finds another element: one of them with `nth` (this element's place
    // among what it finds) — the failed locator itself first. Each is
    // resolved and kept only when it finds this element alone.
    const unique = (e) => {
      const role = roleOf(e), name = accName(e);
      const tries = [];
      const testId = e.getAttribute('data-testid');
      if (testId) tries.push({ testId });
      if (role && name) tries.push({ role, name }, { role, name, exact: true });
      for (const l of labelTexts(e)) if (norm(l)) tries.push({ label: norm(l) });
      if (e.hasAttribute('placeholder') && e.getAttribute('placeholder')) tries.push({ placeholder: e.getAttribute('placeholder') });
      const t = ownText(e);
      if (t !== null && norm(t) && norm(t).length <= 80) tries.push({ text: norm(t) });
      if (e.id && /^[A-Za-z][\w-]*$/.test(e.id)) tries.push({ css: e.localName + '#' + e.id });
      for (const c of e.classList) if (/^[A-Za-z][\w-]*$/.test(c)) tries.push({ css: e.localName + '.' + c });
      for (const l of tries) {
        const m = matches(l);
        if (m.length === 1 && m[0] === e) return l;
      }
      const bases = [whole, ...tries];
      if (role && !name) bases.push({ role });
      for (const b of bases) {
        const at = matches(b).indexOf(e);
        if (at < 0) continue;
        // Checked as a flow resolves it.
        const l = Object.assign({}, b, { nth: at });
        const r = resolve(l);
        if (r.list.length === 1 && r.list[0] === e) return l;
      }
      return null;
    };
    const matched = matches(whole);
    if (matched.length > 0) return { matched: true, total: matched.length, list: matched.slice(0, 10).map(info) };
    const want = norm(spec.name || spec.label || spec.placeholder || spec.text || spec.testId || '').toLowerCase();
    // What the failed step does with its element (`arg.action`): the
    // elements that can take it rank first. Those of a kind a page has few
    // of (text boxes for `fill`, checkboxes, selects, file inputs) are
    // listed even when nothing about them is close to the locator.
    const action = arg.action;
    const few = action !== undefined && action !== 'click';
    if (!few && (spec.css !== undefined || (!want && spec.role === undefined))) return { matched: false, total: 0, list: [] };
    const words = (s) => s.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 2);
    const wantWords = words(want);
    // Edit distance with swapped neighbours as one edit (a typo is a few
    // edits away), bounded.
    const edits = (a, b) => {
      if (Math.abs(a.length - b.length) > 3) return 99;
      let before = null, prev = Array.from({ length: b.length + 1 }, (_, j) => j);
      for (let i = 1; i <= a.length; i++) {
        const cur = [i];
        for (let j = 1; j <= b.length; j++) {
          cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
          if (before && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cur[j] = Math.min(cur[j], before[j - 2] + 1);
        }
        before = prev;
        prev = cur;
      }
      return prev[b.length];
    };
    const close = (s) => {
      s = norm(s).toLowerCase();
      if (!want || !s) return 0;
      if (s === want) return 3;
      if (s.includes(want) || want.includes(s)) return 2;
      if (s.length <= 60 && edits(s, want) <= Math.max(1, Math.floor(want.length / 4))) return 2;
      const sw = words(s);
      return wantWords.some((w) => sw.includes(w) || (w.length >= 4 && sw.some((x) => edits(x, w) <= 1))) ? 1 : 0;
    };
    // A label or placeholder names a form control: those rank first.
    const control = (e) => ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) || e.isContentEditable ||
      ['textbox', 'combobox', 'searchbox', 'spinbutton', 'checkbox', 'radio', 'switch', 'slider', 'listbox'].includes(roleOf(e));
    const wantsControl = spec.label !== undefined || spec.placeholder !== undefined;
    const clickable = ['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
      'menuitemradio', 'option', 'treeitem'];
    // Whether `e` can take the action (without one: a form control, for a
    // label or placeholder).
    const fits = (e, role) => {
      switch (action) {
        case 'fill':
          // Text boxes, text areas and the host of an editable region.
          if (e.tagName === 'SELECT' || !isEditable(e)) return false;
          return !e.isContentEditable || !(e.parentElement && e.parentElement.isContentEditable);
        case 'click': return clickable.includes(role);
        case 'check': return checked(e) !== null;
        case 'select': return e.tagName === 'SELECT';
        case 'file': return e.tagName === 'INPUT' && (e.type || '').toLowerCase() === 'file';
        default: return wantsControl && control(e);
      }
    };
    const scored = [];
    for (const e of all()) {
      const role = roleOf(e);
      const testId = e.getAttribute('data-testid');
      const fit = fits(e, role);
      if (!fit && !role && testId === null && !e.hasAttribute('placeholder') && !(e.labels && e.labels.length)) continue;
      let score = spec.role !== undefined && role === spec.role ? 2 : 0;
      const strings = [accName(e), e.getAttribute('placeholder') || '', testId || '', ...labelTexts(e)];
      const t = ownText(e);
      if (t !== null && norm(t).length <= 120) strings.push(t);
      const c = Math.max(0, ...strings.map(close));
      score += c;
      if (score > 0 || (fit && few)) scored.push({ e, score, fit: fit && (few || c > 0 || score > 0), shown: isVisible(e) });
    }
    // Those that can take the action first, then the closest, then the
    // visible; of equals, document order.
    scored.sort((a, b) => (b.fit - a.fit) || (b.score - a.score) || (b.shown - a.shown));
    return { matched: false, total: scored.length, list: scored.slice(0, 10).map((x) => info(x.e)) };
  }
  if (op === 'countVisible') {
    const r = resolve(spec);
    return { count: r.list.length, visible: r.list.filter(isVisible).length };
  }
  if (op === 'settle') {
    if (!window.__uiQaMutations) {
      window.__uiQaMutations = { n: 0 };
      try {
        // The recording visualizer's host (and its mark count) is not the page.
        const ours = (n) => n && n.localName === 'ui-qa-visualizer';
        const page = (r) => !ours(r.target) && !([...r.addedNodes, ...r.removedNodes].length > 0 && [...r.addedNodes, ...r.removedNodes].every(ours));
        new MutationObserver((l) => { window.__uiQaMutations.n += l.filter(page).length; })
          .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      } catch (e) { /* document not ready */ }
    }
    let busy = null;
    const cand = document.querySelectorAll('[aria-busy="true"],[role="progressbar"],progress,[class*="spinner" i],[class*="skeleton" i],[class*="loading" i],[data-testid*="spinner" i],[data-testid*="skeleton" i],[data-testid*="loading" i]');
    for (const e of cand) {
      if (e === document.documentElement || e === document.body) {
        if (e.getAttribute('aria-busy') === 'true') { busy = describe(e) + '[aria-busy]'; break; }
        continue;
      }
      if (isVisible(e)) {
        let why = e.getAttribute('aria-busy') === 'true' ? '[aria-busy]' : (e.getAttribute('role') === 'progressbar' || e.tagName === 'PROGRESS') ? '[role=progressbar]' : '';
        if (!why) { const t = e.getAttribute('data-testid'); why = t && /spinner|skeleton|loading/i.test(t) ? '[data-testid*=' + (t.match(/spinner|skeleton|loading/i)[0].toLowerCase()) + ']' : ''; }
        busy = describe(e) + why;
        break;
      }
    }
    const viz = document.querySelector('ui-qa-visualizer');
    const marks = viz ? Number(viz.getAttribute('data-marks')) || 0 : 0;
    return { ready: document.readyState, busy, mutations: window.__uiQaMutations.n, marks };
  }
  if (op === 'metrics') {
    const d = document.documentElement;
    return {
      scrollX, scrollY, innerWidth, innerHeight,
      scrollWidth: d.scrollWidth, scrollHeight: d.scrollHeight,
      elementCount: document.getElementsByTagName('*').length,
      imageCount: document.images.length, linkCount: document.links.length,
      formCount: document.forms.length,
    };
  }
  if (op === 'scroll') {
    if (arg.by) window.scrollBy(arg.x || 0, arg.y || 0); else window.scrollTo(arg.x || 0, arg.y || 0);
    return { scrollX, scrollY };
  }
  if (op === 'frameInfo' || op === 'frameBox') {
    // A step target frame, seen from its parent document.
    const r = resolve(spec);
    if (r.list.length === 0) return { status: 'none' };
    if (r.list.length > 1) return { status: 'ambiguous', count: r.list.length };
    const f = r.list[0];
    if (f.tagName !== 'IFRAME' && f.tagName !== 'FRAME') return { status: 'not_a_frame', what: describe(f) };
    let doc = null;
    try { doc = f.contentDocument; } catch (e) { doc = null; }
    if (!doc) return { status: 'cross_origin', what: describe(f) };
    if (op === 'frameInfo') {
      const src = f.getAttribute('src');
      const pending = src && src.trim() !== '' && src.trim() !== 'about:blank' && !f.hasAttribute('srcdoc') && doc.URL === 'about:blank';
      if (pending || doc.readyState !== 'complete') return { status: 'loading' };
      return { status: 'ok' };
    }
    // frameBox: the frame's content box in the viewport, the point
    // (arg.x, arg.y) of the frame's viewport brought into the page's
    // viewport, and what receives events there.
    const box = () => {
      const b = f.getBoundingClientRect();
      const s = style(f);
      return { x: b.left + f.clientLeft + parseFloat(s.paddingLeft || '0'), y: b.top + f.clientTop + parseFloat(s.paddingTop || '0') };
    };
    let o = box();
    if (arg.hit) {
      const px = o.x + arg.x, py = o.y + arg.y;
      if (px < 0 || py < 0 || px >= innerWidth || py >= innerHeight) {
        window.scrollBy({ left: px - innerWidth / 2, top: py - innerHeight / 2, behavior: 'instant' });
        o = box();
      }
    }
    const out = { status: 'ok', dx: o.x, dy: o.y, sx: scrollX, sy: scrollY, cover: null };
    if (arg.hit) out.cover = hitTarget(f, o.x + arg.x, o.y + arg.y);
    return out;
  }
  if (op === 'page') {
    return { url: location.href, title: document.title, ready: document.readyState };
  }
  if (op === 'maskShow' || op === 'maskHide') {
    // Secret masks around a screenshot (crate::artifacts): the driver found
    // what shows a secret and passes references only — elements (a value or
    // an attribute shows it) and text node ranges (text shows it) — never
    // a secret. `maskShow` covers each with an opaque box in the top layer
    // of this (the top) document; `maskHide` measures again (did anything
    // move while the picture was taken?) and removes every box.
    const MARK = 'data-ui-qa-mask';
    const PAD = 3;
    const px = (v) => parseFloat(v) || 0;
    const rendered = (list) => [...list].filter((r) => r.width > 0 && r.height > 0)
      .map((r) => ({ x: r.left, y: r.top, w: r.width, h: r.height }));
    // An option shows through its <select>, a textarea's default text
    // through the textarea.
    const shownBy = (n) => {
      const e = n.nodeType === 1 ? n : n.parentElement;
      if (!e) return null;
      if (e.tagName === 'TEXTAREA') return e;
      return ['OPTION', 'OPTGROUP', 'SELECT'].includes(e.tagName) ? e.closest('select') : null;
    };
    // One unit's rectangles in this document's viewport: { rects } or
    // { why } ('hidden': nothing rendered; 'frame': not reachable).
    const measure = (u, nodes) => {
      try {
        const refs = u.k === 'el' ? [nodes[u.n]] : u.p.map((x) => nodes[x[0]]);
        if (!refs.length || refs.some((n) => !n || typeof n.nodeType !== 'number')) return { why: 'frame' };
        let rects = [];
        if (u.k === 'el') {
          const el = shownBy(refs[0]) || refs[0];
          rects = rendered(el.getClientRects());
        } else {
          for (const [n, s, e] of u.p) {
            const t = nodes[n];
            const by = shownBy(t);
            if (by) { rects.push(...rendered(by.getClientRects())); continue; }
            const rg = t.ownerDocument.createRange();
            rg.setStart(t, Math.min(s, t.length));
            rg.setEnd(t, Math.min(e, t.length));
            rects.push(...rendered(rg.getClientRects()));
          }
        }
        if (!rects.length) return { why: 'hidden' };
        // Up through same-origin frames, clipped to each frame's content box.
        let w = refs[0].ownerDocument.defaultView;
        for (let depth = 0; w !== window; depth++) {
          const fe = depth < 32 && w ? w.frameElement : null;
          if (!fe) return { why: 'frame' };
          const b = fe.getBoundingClientRect();
          const s = style(fe);
          const x0 = b.left + fe.clientLeft + px(s.paddingLeft), y0 = b.top + fe.clientTop + px(s.paddingTop);
          const x1 = x0 + fe.clientWidth - px(s.paddingLeft) - px(s.paddingRight);
          const y1 = y0 + fe.clientHeight - px(s.paddingTop) - px(s.paddingBottom);
          rects = rects.map((r) => {
            const x = Math.max(r.x + x0, x0), y = Math.max(r.y + y0, y0);
            return { x, y, w: Math.min(r.x + x0 + r.w, x1) - x, h: Math.min(r.y + y0 + r.h, y1) - y };
          }).filter((r) => r.w > 0 && r.h > 0);
          w = fe.ownerDocument.defaultView;
        }
        return { rects };
      } catch (e) {
        return { why: 'frame' };
      }
    };
    const measureAll = (units, nodes) => {
      const rects = [];
      for (const u of units) {
        const m = measure(u, nodes);
        if (m.why) return m;
        rects.push(...m.rects);
      }
      return { rects };
    };
    const same = (a, b) => a.length === b.length && a.every((r, i) =>
      Math.abs(r.x - b[i].x) < 0.5 && Math.abs(r.y - b[i].y) < 0.5 && Math.abs(r.w - b[i].w) < 0.5 && Math.abs(r.h - b[i].h) < 0.5);
    const clear = () => {
      let n = 0;
      for (const c of document.querySelectorAll('[' + MARK + ']')) {
        try { if (c.matches(':popover-open')) c.hidePopover(); } catch (e) { /* not a popover */ }
        c.remove();
        n += 1;
      }
      return n;
    };
    if (op === 'maskHide') {
      // `intact`: the masks were still there as placed (the page did not
      // remove or hide them while the picture was taken).
      let moved = false, intact = 0;
      for (const c of document.querySelectorAll('[' + MARK + ']')) {
        const m = c.__uiQaMask;
        if (!m) continue;
        const now = measureAll(m.units, m.nodes);
        if (now.why || !same(now.rects, m.rects)) moved = true;
        if (c.isConnected && c.children.length === m.rects.length && (!m.top || c.matches(':popover-open'))) intact += 1;
      }
      return { moved, intact: intact === 1, removed: clear() };
    }
    clear();
    const units = arg.plan, nodes = arg.nodes;
    const m = measureAll(units, nodes);
    if (m.why) return { status: 'unmaskable', why: m.why };
    if (m.rects.length > 5000) return { status: 'unmaskable', why: 'many' };
    const force = (el, css) => { for (const k of Object.keys(css)) el.style.setProperty(k, css[k], 'important'); };
    const reset = {
      margin: '0', padding: '0', border: '0 none', outline: 'none', display: 'block', opacity: '1',
      visibility: 'visible', transform: 'none', filter: 'none', 'clip-path': 'none', 'pointer-events': 'none',
      'box-sizing': 'border-box', 'min-width': '0', 'min-height': '0', 'max-width': 'none', 'max-height': 'none',
      right: 'auto', bottom: 'auto', position: 'absolute', contain: 'none', 'mix-blend-mode': 'normal',
    };
    const c = document.createElement('div');
    c.setAttribute(MARK, '');
    c.setAttribute('aria-hidden', 'true');
    c.inert = true;
    force(c, { ...reset, left: '0px', top: '0px', width: '0px', height: '0px', overflow: 'visible',
      background: 'transparent', 'z-index': '2147483647' });
    document.documentElement.appendChild(c);
    // The top layer paints above modal dialogs, popovers and fullscreen
    // elements; an absolutely positioned top-layer element is placed
    // against the initial containing block (document coordinates).
    let top = false;
    if (typeof c.showPopover === 'function') {
      c.setAttribute('popover', 'manual');
      try { c.showPopover(); top = true; } catch (e) { /* stays a plain overlay */ }
    }
    const o = c.getBoundingClientRect();
    for (const r of m.rects) {
      const b = document.createElement('div');
      force(b, { ...reset, left: (r.x - o.left - PAD) + 'px', top: (r.y - o.top - PAD) + 'px',
        width: (r.w + 2 * PAD) + 'px', height: (r.h + 2 * PAD) + 'px', background: '#000' });
      c.appendChild(b);
    }
    Object.defineProperty(c, '__uiQaMask', { value: { units, nodes, rects: m.rects, top } });
    return { status: 'ok', boxes: m.rects.length };
  }
  return { status: 'error', error: 'unknown op' };
}
