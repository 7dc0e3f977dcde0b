// The page as compact text for the model, from the top of the viewport
// down: headings, text, and every element one can act on, numbered
// ([3] button "Save"); the numbered elements are kept for click and type.
// CAP (characters) is replaced before this runs.
(() => {
  const CAP = __CAP__;
  const refs = [];
  const out = [];
  let size = 0;
  let cut = false;
  let line = '';
  const push = (text) => {
    text = text.replace(/[ \t\r\n\u00a0]+/g, ' ').trim();
    if (!text) return;
    if (size + text.length + 1 > CAP) { cut = true; return; }
    out.push(text);
    size += text.length + 1;
  };
  const flush = () => { push(line); line = ''; };
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'HEAD', 'IFRAME', 'CANVAS', 'OBJECT', 'EMBED', 'VIDEO', 'AUDIO', 'svg']);
  const BLOCK = /^(ADDRESS|ARTICLE|ASIDE|BLOCKQUOTE|BR|DD|DIV|DL|DT|FIELDSET|FIGCAPTION|FIGURE|FOOTER|FORM|HEADER|HR|LI|MAIN|NAV|OL|P|PRE|SECTION|TABLE|TR|UL|DETAILS|TBODY|THEAD|LEGEND|LABEL)$/;
  const clip = (s, n = 80) => {
    s = (s || '').replace(/\s+/g, ' ').trim();
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  };
  const q = (s) => JSON.stringify(s);
  const nameOf = (el) => clip(el.getAttribute('aria-label')
    || (el.labels && el.labels[0] && el.labels[0].innerText)
    || el.getAttribute('placeholder') || el.getAttribute('title')
    || el.getAttribute('name') || el.id || '');
  const textOf = (el) => clip(el.getAttribute('aria-label') || el.innerText
    || el.getAttribute('title') || el.value
    || (el.querySelector('img[alt]') && el.querySelector('img[alt]').alt) || '');
  const ROLES = ['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'switch', 'option', 'textbox', 'combobox', 'searchbox'];
  const kindOf = (el) => {
    const t = el.tagName;
    if (t === 'A' && el.hasAttribute('href')) return 'link';
    if (t === 'BUTTON' || t === 'SUMMARY') return 'button';
    if (t === 'INPUT') {
      const ty = (el.type || 'text').toLowerCase();
      if (ty === 'hidden') return null;
      if (['submit', 'button', 'reset', 'image'].includes(ty)) return 'button';
      if (ty === 'checkbox' || ty === 'radio') return ty;
      return 'input';
    }
    if (t === 'SELECT') return 'select';
    if (t === 'TEXTAREA') return 'textarea';
    const role = el.getAttribute('role');
    if (role && ROLES.includes(role)) return role;
    if (el.isContentEditable && el.hasAttribute('contenteditable')) return 'textbox';
    return null;
  };
  const describe = (el, kind) => {
    refs.push(el);
    let s = `[${refs.length}] ${kind}`;
    if (kind === 'input' || kind === 'textarea' || kind === 'textbox' || kind === 'combobox' || kind === 'searchbox') {
      const ty = el.type && kind === 'input' && el.type !== 'text' ? `(${el.type})` : '';
      s += `${ty} ${q(nameOf(el))}`;
      const value = el.isContentEditable ? el.innerText : el.value;
      // A password's value is the user's secret: only whether it is filled.
      if (el.type === 'password') { if (value) s += ' (filled)'; }
      else if (value) s += ` value=${q(clip(value))}`;
    } else if (kind === 'checkbox' || kind === 'radio') {
      s += ` ${q(nameOf(el) || textOf(el.parentElement || el))}${el.checked ? ' checked' : ''}`;
    } else if (kind === 'select') {
      const chosen = el.selectedOptions && el.selectedOptions[0];
      s += ` ${q(nameOf(el))}`;
      if (chosen) s += ` value=${q(clip(chosen.text))}`;
      const options = [...el.options].slice(0, 12).map((o) => q(clip(o.text, 30)));
      s += ` options: ${options.join(', ')}${el.options.length > 12 ? ', …' : ''}`;
    } else {
      s += ` ${q(textOf(el))}`;
      const href = kind === 'link' && el.getAttribute('href');
      if (href && !href.startsWith('javascript:') && !href.startsWith('#')) s += ` -> ${clip(href, 100)}`;
    }
    if (el.disabled) s += ' disabled';
    return s;
  };
  const shown = (el) => {
    if (el.checkVisibility) return el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
    return true;
  };
  const walk = (node) => {
    if (cut) return;
    if (node.nodeType === Node.TEXT_NODE) { line += ' ' + node.textContent; return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP.has(el.tagName) || !shown(el)) return;
    const box = el.getBoundingClientRect();
    if (box.height > 0 && box.bottom <= 0) return;
    const kind = kindOf(el);
    if (kind) { line += ' ' + describe(el, kind); return; }
    const heading = /^H([1-6])$/.exec(el.tagName);
    if (heading) { flush(); push('#'.repeat(+heading[1]) + ' ' + clip(el.innerText, 120)); return; }
    if (el.tagName === 'IMG') { if (el.alt) line += ` [image ${q(clip(el.alt, 60))}]`; return; }
    const block = BLOCK.test(el.tagName);
    if (block) { flush(); if (el.tagName === 'LI') line = '- '; }
    for (const child of el.childNodes) walk(child);
    if (el.shadowRoot) for (const child of el.shadowRoot.childNodes) walk(child);
    if (block || el.tagName === 'TD' || el.tagName === 'TH') { if (el.tagName === 'TD' || el.tagName === 'TH') line += ' |'; else flush(); }
  };
  if (document.body) walk(document.body);
  flush();
  Object.defineProperty(window, '__egirlRefs', { value: refs, configurable: true, enumerable: false, writable: true });
  const max = Math.max(0, document.documentElement.scrollHeight - innerHeight);
  return {
    title: document.title, url: location.href, text: out.join('\n'), cut,
    scroll: max > 0 ? Math.round(100 * scrollY / max) : -1,
  };
})()
