// DOM helpers shared by every module. Everything that came over the socket
// reaches the page through `el`/`text` (textContent, never HTML), after
// `clean` took out escape sequences and control characters.

// ANSI/VT sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \),
// other two-byte escapes; then C0/C1 controls except tab and newline, and
// the bidirectional overrides that can make text read other than it is.
const CSI = /\u001b\[[0-?]*[ -/]*[@-~]/g;
const C1_CSI = /\u009b[0-?]*[ -/]*[@-~]/g;
const OSC = /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g;
const DCS = /\u001b[PX^_][^\u001b]*(?:\u001b\\)?/g;
const ESC2 = /\u001b[ -~]?/g;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text as it may be shown: escapes and control characters removed. */
export function clean(value) {
  if (value === undefined || value === null) return '';
  const s = typeof value === 'string' ? value : String(value);
  return s
    .replace(CSI, '')
    .replace(C1_CSI, '')
    .replace(OSC, '')
    .replace(DCS, '')
    .replace(ESC2, '')
    .replace(/\r\n?/g, '\n')
    .replace(CONTROL, '');
}

/** A text node of cleaned text. */
export function text(value) {
  return document.createTextNode(clean(value));
}

/**
 * An element with a class (string, may hold several) and children: strings
 * become cleaned text nodes, nodes are appended, null/false are skipped.
 */
export function el(tag, cls, ...children) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? text(child) : child);
  }
  return node;
}

/** Replaces a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? text(child) : child);
  }
  return node;
}

/** A button with a class, a label and a click handler. */
export function button(cls, label, onClick, title) {
  const b = el('button', cls, label);
  b.type = 'button';
  if (title) b.title = title;
  if (onClick) b.addEventListener('click', onClick);
  return b;
}

/** The badge word of an origin: `discord:123` → `discord`. */
export function badgeOf(origin) {
  const kind = clean(origin || '').split(':')[0];
  const known = ['tui', 'cli', 'web', 'discord', 'telegram', 'cron', 'heartbeat', 'webhook'];
  return known.includes(kind) ? kind : 'cli';
}

/** The origin badge element (its full origin in the tooltip). */
export function badge(origin) {
  const word = badgeOf(origin);
  const b = el('span', `badge badge-${word}`, word);
  b.title = clean(origin || word);
  return b;
}

/** First line of a text, at most `max` characters. */
export function oneLine(value, max = 80) {
  const line = clean(value).split('\n').find((l) => l.trim() !== '') || '';
  const t = line.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** `3s`, `5m`, `2h`, `3d`, or a date, for a time in the past. */
export function ago(when, now = Date.now()) {
  const t = typeof when === 'number' ? when : Date.parse(when);
  if (!Number.isFinite(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  if (s < 7 * 86400) return `${Math.floor(s / 86400)}d`;
  return new Date(t).toLocaleDateString();
}

/** `in 5m`, `in 2h` for a time ahead. */
export function until(when, now = Date.now()) {
  const t = Date.parse(when);
  if (!Number.isFinite(t)) return '';
  const s = Math.round((t - now) / 1000);
  if (s <= 0) return 'due';
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m`;
  if (s < 86400) return `in ${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `in ${Math.floor(s / 86400)}d`;
}

/** Local clock time of an ISO timestamp (`14:03`). */
export function clock(when) {
  const t = Date.parse(when);
  if (!Number.isFinite(t)) return '';
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

/** Session ids are file names: letters, digits, `-`, `_`, `.`, ≤128, no leading dot. */
export function validSessionId(id) {
  return typeof id === 'string' && /^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,127}$/.test(id);
}

/** A new web session id, `web-YYYYMMDD-HHMMSS-xxxxxx` (local time, as the core's). */
export function newSessionId() {
  const d = new Date();
  const p = (n) => String(n).padStart(2, '0');
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  const bytes = new Uint8Array(3);
  crypto.getRandomValues(bytes);
  const rand = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `web-${stamp}-${rand}`;
}

/**
 * A short one-line rendering of a tool call's arguments. All of it on the
 * line, not its first line: `ls` then `rm -rf ~` on the next, or a tail
 * pushed out of sight by a run of spaces, must not read as a harmless
 * command. Line breaks show as ⏎, runs of blanks as one space.
 */
export function argsLine(args, max = 120) {
  if (args === null || args === undefined) return '';
  if (typeof args !== 'object') return flat(String(args), max);
  const preferred = ['command', 'path', 'url', 'query', 'task', 'pattern'];
  for (const key of preferred) {
    if (typeof args[key] === 'string') return flat(args[key], max);
  }
  let s;
  try {
    s = JSON.stringify(args);
  } catch {
    s = '';
  }
  return flat(s, max);
}

function flat(value, max) {
  const t = clean(value)
    .trim()
    .replace(/[ \t]*\n\s*/g, ' ⏎ ')
    .replace(/\s+/g, ' ');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Numbers as people read them: 12,345. */
export function num(n) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : '–';
}

/** Storage that never throws (private mode, quota, disabled). */
export const store = {
  get(key) {
    try {
      return sessionStorage.getItem(key);
    } catch {
      return null;
    }
  },
  set(key, value) {
    try {
      if (value === null || value === '') sessionStorage.removeItem(key);
      else sessionStorage.setItem(key, value);
    } catch {
      /* storage full or off: the draft lives in memory only */
    }
  },
};
