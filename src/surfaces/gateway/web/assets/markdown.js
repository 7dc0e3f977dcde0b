// Markdown to DOM nodes, for model-written text. No raw HTML, ever: a tag
// in the text is text. Links only to http(s) and mailto. Handles what a
// streaming answer holds mid-way (an unclosed fence renders as code).

import { clean, el } from './dom.js';
import { highlight } from './highlight.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
// No lazy group before trailing `\s*#*\s*`: on a long line of spaces that
// backtracks for seconds. The closing #s are cut in `headingText`.
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** The text rendered as a fragment of block elements. */
export function render(source) {
  const frag = document.createDocumentFragment();
  blocks(clean(source).split('\n'), frag, 0);
  return frag;
}

function blocks(lines, out, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      i = codeBlock(lines, i, fence, out);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(6, heading[1].length + 2);
      out.append(inline(headingText(heading[2] || ''), el(`h${Math.min(level, 6)}`, 'md-h')));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      out.append(el('hr'));
      i += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < 8) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(QUOTE.exec(lines[i])[1]);
        i += 1;
      }
      const quote = el('blockquote');
      blocks(inner, quote, depth + 1);
      out.append(quote);
      continue;
    }
    if (ITEM.test(line) && depth < 8) {
      i = list(lines, i, out, depth);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && tableSep(lines[i + 1])) {
      i = table(lines, i, out);
      continue;
    }
    i = paragraph(lines, i, out);
  }
}

/** A heading's text without its closing `#`s (`## Title ##`). */
function headingText(raw) {
  const t = raw.trimEnd();
  let end = t.length;
  while (end > 0 && t[end - 1] === '#') end -= 1;
  // Closing #s count only after a space (`C#` keeps its #).
  if (end < t.length && (end === 0 || t[end - 1] === ' ' || t[end - 1] === '\t')) return t.slice(0, end).trimEnd();
  return t;
}

function codeBlock(lines, start, fence, out) {
  const marker = fence[1];
  const lang = fence[2].toLowerCase();
  const body = [];
  let i = start + 1;
  while (i < lines.length) {
    const l = lines[i];
    const t = l.trim();
    if (t.length >= marker.length && [...t].every((ch) => ch === marker[0])) {
      i += 1;
      break;
    }
    body.push(l);
    i += 1;
  }
  const code = el('code');
  if (lang) code.dataset.lang = lang;
  highlight(body.join('\n'), lang, code);
  const pre = el('pre', 'md-code', code);
  if (lang) pre.dataset.lang = lang;
  out.append(pre);
  return i;
}

function paragraph(lines, start, out) {
  const p = el('p');
  let i = start;
  let first = true;
  while (i < lines.length) {
    const l = lines[i];
    if (l.trim() === '') break;
    if (!first && (FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || RULE.test(l) || ITEM.test(l))) break;
    if (!first) p.append(el('br'));
    inline(l.trim(), p);
    first = false;
    i += 1;
  }
  out.append(p);
  return i;
}

function list(lines, start, out, depth) {
  const head = ITEM.exec(lines[start]);
  const indent = head[1].length;
  const ordered = /\d/.test(head[2]);
  const node = el(ordered ? 'ol' : 'ul');
  if (ordered) {
    const n = parseInt(head[2], 10);
    if (n !== 1) node.start = n;
  }
  let i = start;
  let item = null;
  let itemLines = [];
  const flush = () => {
    if (!item) return;
    const [firstLine, ...rest] = itemLines;
    task(firstLine, item);
    if (rest.some((r) => r.trim() !== '')) blocks(rest, item, depth + 1);
    node.append(item);
  };
  while (i < lines.length) {
    const l = lines[i];
    const m = ITEM.exec(l);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      flush();
      item = el('li');
      itemLines = [m[3]];
      i += 1;
      continue;
    }
    // A shallower item, or one of the other kind at this depth, ends the list.
    if (m && (m[1].length < indent || (m[1].length === indent && /\d/.test(m[2]) !== ordered))) break;
    if (l.trim() === '') {
      // A blank line ends the list unless an item of it, or a line indented
      // into the item, follows (models often space numbered items apart).
      const next = lines[i + 1];
      const nextItem = next !== undefined && ITEM.exec(next);
      const sameKind = nextItem && nextItem[1].length === indent && /\d/.test(nextItem[2]) === ordered;
      if (sameKind) {
        i += 1;
        continue;
      }
      if (next === undefined || !(/^\s+/.test(next) && next.search(/\S/) > indent)) break;
      itemLines.push('');
      i += 1;
      continue;
    }
    if (!m && l.search(/\S/) <= indent && !/^\s/.test(l)) {
      // A lazy continuation line of the item's paragraph.
      if (FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || RULE.test(l)) break;
      itemLines[0] = `${itemLines[0]}\n${l.trim()}`;
      i += 1;
      continue;
    }
    itemLines.push(l.slice(Math.min(l.search(/\S/), indent + 2)));
    i += 1;
  }
  flush();
  out.append(node);
  return i;
}

function task(line, item) {
  const m = /^\[([ xX])\]\s+(.*)$/s.exec(line);
  if (m) {
    item.classList.add('task');
    item.append(el('span', 'md-check', m[1] === ' ' ? '☐ ' : '☑ '));
    line = m[2];
  }
  line.split('\n').forEach((part, n) => {
    if (n > 0) item.append(el('br'));
    inline(part, item);
  });
}

/**
 * A table's `|---|:-:|` line. Cell by cell, not one pattern: runs of
 * spaces around optional pipes backtrack quadratically in a pattern.
 */
function tableSep(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|')) s = s.slice(0, -1);
  return s.includes('-') && s.split('|').every((c) => /^:?-+:?$/.test(c.trim()));
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  for (let k = 0; k < s.length; k += 1) {
    if (s[k] === '\\' && s[k + 1] === '|') {
      cur += '|';
      k += 1;
    } else if (s[k] === '|') {
      cells.push(cur.trim());
      cur = '';
    } else cur += s[k];
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, start, out) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((c) => {
    if (c.startsWith(':') && c.endsWith(':')) return 'center';
    if (c.endsWith(':')) return 'right';
    return '';
  });
  const t = el('table', 'md-table');
  const tr = el('tr');
  header.forEach((h, n) => tr.append(cell('th', h, aligns[n])));
  t.append(el('thead', null, tr));
  const body = el('tbody');
  let i = start + 2;
  while (i < lines.length && lines[i].includes('|') && lines[i].trim() !== '') {
    const row = el('tr');
    const cells = splitRow(lines[i]);
    header.forEach((_, n) => row.append(cell('td', cells[n] || '', aligns[n])));
    body.append(row);
    i += 1;
  }
  t.append(body);
  out.append(el('div', 'md-table-wrap', t));
  return i;
}

function cell(tag, source, align) {
  const c = inline(source, el(tag));
  if (align) c.className = `align-${align}`;
  return c;
}

/** A link's href when it is safe to follow: absolute http(s) or mailto. */
export function safeHref(raw) {
  const s = clean(raw).trim();
  if (!/^(https?:\/\/|mailto:)/i.test(s)) return null;
  try {
    const u = new URL(s);
    if (!['http:', 'https:', 'mailto:'].includes(u.protocol)) return null;
    return u.href;
  } catch {
    return null;
  }
}

function link(label, href) {
  const safe = safeHref(href);
  if (!safe) return null;
  const a = el('a', 'md-link');
  a.href = safe;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  a.title = safe;
  return { a, label };
}

const ESCAPABLE = '\\`*_{}[]()#+-.!|~<>"\'';
// Sticky (`y`): matched at an index, no copy of the rest of the text per try.
const URL_AT = /https?:\/\/[^\s<>]+/iy;
const AUTOLINK_AT = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;

/** Inline markdown of `src` appended to `parent` (returned). */
export function inline(src, parent, depth = 0) {
  // Tables built once per text, so that no opener scans the rest of the
  // text again (thousands of unclosed `*` or `[` would take seconds).
  const scan = { src, closers: new Map(), brackets: null, parens: null };
  let buf = '';
  const flush = () => {
    if (buf) parent.append(document.createTextNode(buf));
    buf = '';
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\' && ESCAPABLE.includes(src[i + 1] || '\0')) {
      buf += src[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (src[i + n] === '`') n += 1;
      const fence = '`'.repeat(n);
      const end = src.indexOf(fence, i + n);
      if (end > 0) {
        flush();
        let body = src.slice(i + n, end);
        if (body.startsWith(' ') && body.endsWith(' ') && body.trim()) body = body.slice(1, -1);
        parent.append(el('code', 'md-inline', body));
        i = end + n;
        continue;
      }
      buf += fence;
      i += n;
      continue;
    }
    if ((c === '*' || c === '_') && depth < 6) {
      const done = emphasis(scan, i, c, parent, flush, depth);
      if (done > i) {
        i = done;
        continue;
      }
    }
    if (c === '~' && src[i + 1] === '~' && depth < 6) {
      const end = src.indexOf('~~', i + 2);
      if (end > i + 2) {
        flush();
        parent.append(inline(src.slice(i + 2, end), el('del'), depth + 1));
        i = end + 2;
        continue;
      }
    }
    if ((c === '[' || (c === '!' && src[i + 1] === '[')) && depth < 6) {
      const done = bracketLink(scan, i, parent, flush, depth);
      if (done > i) {
        i = done;
        continue;
      }
    }
    if (c === '<') {
      AUTOLINK_AT.lastIndex = i;
      const m = AUTOLINK_AT.exec(src);
      const made = m && link(m[1], m[1]);
      if (made) {
        flush();
        made.a.append(document.createTextNode(m[1]));
        parent.append(made.a);
        i += m[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && !/[\w/]/.test(src[i - 1] || ' ')) {
      URL_AT.lastIndex = i;
      const m = URL_AT.exec(src);
      if (m) {
        const url = trimUrl(m[0]);
        const made = link(url, url);
        if (made) {
          flush();
          made.a.append(document.createTextNode(url));
          parent.append(made.a);
          i += url.length;
          continue;
        }
        // Not a URL after all: all of it is text, not tried again from
        // each later `h` in it (that was quadratic).
        buf += m[0];
        i += m[0].length;
        continue;
      }
    }
    buf += c;
    i += 1;
  }
  flush();
  return parent;
}

/**
 * A bare URL less the punctuation that ends its sentence; a `)` stays when
 * it closes a `(` of the URL (`…/Rust_(language)`). One pass: counting the
 * parentheses again per character was quadratic on `http://a)))…`.
 */
function trimUrl(raw) {
  let opens = 0;
  let closes = 0;
  for (const ch of raw) {
    if (ch === '(') opens += 1;
    else if (ch === ')') closes += 1;
  }
  let end = raw.length;
  while (end > 0 && '.,;:!?\'")]*_'.includes(raw[end - 1])) {
    if (raw[end - 1] === ')') {
      if (opens >= closes) break;
      closes -= 1;
    }
    end -= 1;
  }
  return raw.slice(0, end);
}

/** Where a run of `n` × `c` can close emphasis, in order (cached per text). */
function closers(scan, c, n) {
  const key = c + n;
  let list = scan.closers.get(key);
  if (list) return list;
  list = [];
  const { src } = scan;
  const marker = c.repeat(n);
  for (let k = src.indexOf(marker); k >= 0; k = src.indexOf(marker, k + 1)) {
    const before = src[k - 1];
    const next = src[k + n];
    if (before && !/\s/.test(before) && next !== c && !(c === '_' && /\w/.test(next || ' '))) list.push(k);
  }
  scan.closers.set(key, list);
  return list;
}

/** The first entry of the sorted `list` above `min`, or -1. */
function firstAbove(list, min) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] > min) hi = mid;
    else lo = mid + 1;
  }
  return lo < list.length ? list[lo] : -1;
}

function emphasis(scan, i, c, parent, flush, depth) {
  const { src } = scan;
  let n = 1;
  while (src[i + n] === c && n < 3) n += 1;
  const after = src[i + n];
  if (!after || /\s/.test(after)) return i;
  // `_` inside a word (snake_case) is not emphasis.
  if (c === '_' && /\w/.test(src[i - 1] || ' ')) return i;
  const end = firstAbove(closers(scan, c, n), i + n);
  if (end < 0) return i;
  flush();
  const inner = src.slice(i + n, end);
  let node;
  if (n === 3) node = el('strong', null, inline(inner, el('em'), depth + 1));
  else node = inline(inner, el(n === 2 ? 'strong' : 'em'), depth + 1);
  parent.append(node);
  return end + n;
}

/** For each opening `open` in the text, where its balancing `close` is (-1: none). */
function matches(src, open, close) {
  const at = new Int32Array(src.length).fill(-1);
  const stack = [];
  for (let k = 0; k < src.length; k += 1) {
    if (src[k] === '\\') k += 1;
    else if (src[k] === open) stack.push(k);
    else if (src[k] === close && stack.length) at[stack.pop()] = k;
  }
  return at;
}

function bracketLink(scan, i, parent, flush, depth) {
  const { src } = scan;
  const image = src[i] === '!';
  const open = image ? i + 1 : i;
  if (!scan.brackets) scan.brackets = matches(src, '[', ']');
  const close = scan.brackets[open];
  if (close < 0 || src[close + 1] !== '(') return i;
  // The target ends at the `)` that balances its `(` (`a_(b)` is one URL).
  if (!scan.parens) scan.parens = matches(src, '(', ')');
  const end = scan.parens[close + 1];
  if (end < 0) return i;
  const label = src.slice(open + 1, close);
  const target = src.slice(close + 2, end).trim().split(/\s+/)[0].replace(/^<|>$/g, '');
  const made = link(label, target);
  flush();
  if (!made) {
    // Not a followable link: the label as text, the target dropped.
    inline(label, parent, depth + 1);
    return end + 1;
  }
  if (image) made.a.append(document.createTextNode(`🖼 ${label || 'image'}`));
  else inline(label, made.a, depth + 1);
  parent.append(made.a);
  // Where it goes, when the text does not say it: an image's, or a text
  // that names another site (`[https://github.com/login](https://evil…)`).
  const host = hostOf(made.a.href);
  if (host && (image || (looksLikeSite(label) && hostOf(label) !== host))) {
    parent.append(el('span', 'md-link-host', ` (${host})`));
  }
  return end + 1;
}

/** A text that reads as a web address: `https://x.y/…`, `www.x.y`, `x.com`. */
function looksLikeSite(text) {
  return /^\s*(https?:\/\/|www\.)?[\w-]+(\.[\w-]+)+([/?#]\S*)?\s*$/i.test(text);
}

/** The host a URL or bare domain names, lower case; '' when none. */
function hostOf(text) {
  const t = text.trim();
  try {
    return new URL(/^[a-z]+:/i.test(t) ? t : `https://${t}`).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}
