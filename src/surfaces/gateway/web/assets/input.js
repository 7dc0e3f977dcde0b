// The input box and the keyboard: Enter sends (a new line on a touch
// screen), Shift+Enter breaks the line, Esc interrupts (empty box) or
// closes an overlay, slash commands, the draft kept per session
// (sessionStorage), the /rewind picker and the /help overlay.

import { button, clean, clock, el, fill, oneLine, store } from './dom.js';

export const COMMANDS = [
  ['/new', 'start a new session (the input then sends there)'],
  ['/compact [focus]', 'summarize the older turns now; focus says what the summary must keep'],
  ['/fork', 'copy this session into a new one and open it'],
  ['/rewind', 'go back to before an earlier message (a picker), restoring files the file tools changed'],
  ['/local · /remote', 'force the next turn to the local or the remote model'],
  ['/memory Q', 'search memory; the hits fill the memory pane'],
  ['/clear', 'forget this session’s history (the transcript keeps it)'],
  ['/help', 'this help'],
];

export const KEYS = [
  ['Enter', 'send (on a touch screen: a new line; the send button sends)'],
  ['Shift+Enter', 'new line'],
  ['PgUp · PgDn', 'scroll the conversation'],
  ['Esc', 'interrupt the running turn (empty box) · close a picker or this help'],
  ['Ctrl+K, /', 'focus the sessions (when not typing); ↑↓ or j/k move, Enter opens'],
  ['i', 'focus the input box (when not typing)'],
  ['Alt+N', 'new session'],
  ['Alt+A', 'show the approvals'],
  ['?', 'this help (when not typing)'],
];

/** A touch screen is the main pointer (a phone, a tablet). */
function touch() {
  return window.matchMedia('(pointer: coarse)').matches;
}

export class Input {
  constructor(app) {
    this.app = app;
    this.box = document.querySelector('#input');
    this.form = document.querySelector('#input-form');
    this.picker = document.querySelector('#rewind-picker');
    this.help = document.querySelector('#help');
    this.session = null;
    this.saveTimer = null;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    document.querySelector('#interrupt').addEventListener('click', () => this.app.interrupt());
    this.box.addEventListener('keydown', (e) => this.boxKey(e));
    this.box.addEventListener('input', () => {
      this.autosize();
      clearTimeout(this.saveTimer);
      this.saveTimer = setTimeout(() => this.saveDraft(), 250);
    });
    document.addEventListener('keydown', (e) => this.globalKey(e));
    if (touch()) this.box.placeholder = 'message · /help';
    // A reload or a closed tab within the debounce keeps the last keys too.
    window.addEventListener('pagehide', () => this.saveDraft());
    this.buildHelp();
  }

  /** The box now sends to `session`: keep the old draft, load the new one. */
  switchTo(session, { carry = false } = {}) {
    if (carry) {
      // The text in the box goes to the session made for it: no draft stays behind.
      store.set(this.draftKey(this.session), null);
      this.session = session;
      return;
    }
    this.saveDraft();
    this.session = session;
    this.box.value = store.get(this.draftKey(session)) || '';
    this.autosize();
    this.closePicker();
  }

  draftKey(session) {
    return `egirl:draft:${session || '(new)'}`;
  }

  saveDraft() {
    store.set(this.draftKey(this.session), this.box.value);
  }

  /** Grows with the lines typed (rows, not a style: the CSP allows no inline style). */
  autosize() {
    const lines = this.box.value.split('\n').length;
    this.box.rows = Math.max(1, Math.min(lines, 10));
  }

  /** Puts text back (a message not sent); never overwrites what is there. */
  restore(text) {
    if (!text) return;
    this.box.value = this.box.value ? `${text}\n${this.box.value}` : text;
    this.autosize();
    this.saveDraft();
  }

  clear() {
    this.box.value = '';
    this.autosize();
    this.saveDraft();
  }

  submit() {
    const raw = this.box.value;
    const text = raw.trim();
    if (!text) return;
    if (text.startsWith('/') && !text.startsWith('//')) {
      if (this.command(text)) this.clear();
      return;
    }
    // `//x` sends `/x` as text.
    const body = text.startsWith('//') ? raw.trimStart().slice(1) : raw;
    if (this.app.send(body)) this.clear();
  }

  /** A slash command; true when it was taken (the box is then cleared). */
  command(line) {
    const [name, ...rest] = line.split(/\s+/);
    const arg = line.slice(name.length).trim();
    switch (name) {
      case '/new':
        this.app.newSession();
        return true;
      case '/compact':
        return this.app.command({ name: 'compact', origin: 'web', ...(arg ? { focus: arg } : {}) });
      case '/fork':
        return this.app.command({ name: 'fork' });
      case '/rewind':
        this.openPicker();
        return true;
      case '/local':
      case '/remote':
        return this.app.command({ name: 'force_target', target: name.slice(1) });
      case '/memory':
        if (!arg) {
          this.app.notice('/memory needs a query: /memory what did we decide');
          return false;
        }
        this.app.memorySearch(arg);
        return true;
      case '/clear':
        return this.app.command({ name: 'clear' });
      case '/help':
      case '/?':
        this.openHelp();
        return true;
      default:
        this.app.notice(`unknown command ${clean(name)}${rest.length ? '' : ''}: /help lists them (start with // to send it as text)`);
        return false;
    }
  }

  boxKey(e) {
    if (e.isComposing || e.keyCode === 229) return;
    const modified = e.shiftKey || e.altKey || e.ctrlKey || e.metaKey;
    // A phone's keyboard has no Shift+Enter: there Enter breaks the line
    // and the send button (or Ctrl+Enter) sends, as chat apps do.
    if (e.key === 'Enter' && ((!modified && !touch()) || (touch() && (e.ctrlKey || e.metaKey)))) {
      e.preventDefault();
      this.submit();
    } else if (e.key === 'PageUp' || e.key === 'PageDown') {
      // As in the TUI: the conversation scrolls while the box keeps focus.
      e.preventDefault();
      const view = document.querySelector('#conversation');
      view.scrollBy({ top: (e.key === 'PageUp' ? -0.85 : 0.85) * view.clientHeight });
    } else if (e.key === 'Escape') {
      if (this.closeOverlays()) {
        e.preventDefault();
      } else if (this.box.value === '') {
        e.preventDefault();
        this.app.interrupt();
      }
      e.stopPropagation();
    }
  }

  typing(target) {
    return target && (target.tagName === 'TEXTAREA' || target.tagName === 'INPUT' || target.isContentEditable);
  }

  globalKey(e) {
    const typing = this.typing(e.target);
    if (e.key === 'Escape' && !typing) {
      if (this.closeOverlays()) e.preventDefault();
      // Esc on a focused button (an approval's) must not stop the turn.
      else if (e.target === document.body || e.target.closest('#pane-conversation')) this.app.interrupt();
      return;
    }
    if ((e.ctrlKey || e.metaKey) && (e.key === 'k' || e.key === 'K')) {
      e.preventDefault();
      this.app.focusSessions();
      return;
    }
    // By the key's code too: on a Mac, Option+A types `å` and Option+N a dead key.
    if (e.altKey && (e.key === 'n' || e.key === 'N' || e.code === 'KeyN')) {
      e.preventDefault();
      this.app.newSession();
      return;
    }
    if (e.altKey && (e.key === 'a' || e.key === 'A' || e.code === 'KeyA')) {
      e.preventDefault();
      this.app.showPane('approvals');
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === '/') {
      e.preventDefault();
      this.app.focusSessions();
    } else if (e.key === 'i') {
      e.preventDefault();
      this.focus();
    } else if (e.key === '?') {
      e.preventDefault();
      this.openHelp();
    }
  }

  focus() {
    this.app.showPane('conversation');
    this.box.focus();
  }

  closeOverlays() {
    let closed = false;
    if (!this.picker.hidden) {
      this.closePicker();
      closed = true;
    }
    if (!this.help.hidden) {
      this.help.hidden = true;
      closed = true;
    }
    return closed;
  }

  // ---- /rewind ----

  openPicker() {
    const turns = this.app.userTurns();
    const list = this.picker.querySelector('.picker-list');
    fill(list);
    if (this.app.busy()) {
      this.app.notice('a turn is running: wait for it to end (or Esc) before /rewind');
      return;
    }
    if (this.app.truncatedTranscript()) {
      this.app.notice('/rewind: this transcript is too long to number its messages here; use `egirl --session ID --rewind N`');
      return;
    }
    if (!turns.length) {
      this.app.notice('nothing to rewind: no message sent yet');
      return;
    }
    for (const t of turns) {
      const b = button('picker-row', null, () => {
        this.closePicker();
        this.app.command({ name: 'rewind', turn: t.turn });
      });
      b.dataset.turn = String(t.turn);
      b.append(el('span', 'picker-n', `${t.turn}`), el('span', 'picker-text', oneLine(t.text, 100)), el('span', 'picker-time', t.ts ? clock(t.ts) : ''));
      list.append(b);
    }
    this.picker.hidden = false;
    const last = list.lastElementChild;
    if (last) last.focus();
  }

  closePicker() {
    if (this.picker.hidden) return;
    this.picker.hidden = true;
    this.box.focus();
  }

  pickerKey(e) {
    const rows = [...this.picker.querySelectorAll('button[data-turn]')];
    const at = rows.indexOf(document.activeElement);
    if (e.key === 'ArrowUp' || e.key === 'k') {
      e.preventDefault();
      if (at > 0) rows[at - 1].focus();
    } else if (e.key === 'ArrowDown' || e.key === 'j') {
      e.preventDefault();
      if (at >= 0 && at < rows.length - 1) rows[at + 1].focus();
    }
  }

  // ---- /help ----

  buildHelp() {
    const body = this.help.querySelector('.help-body');
    const table = (title, rows) => {
      const t = el('table', 'help-table');
      for (const [k, v] of rows) t.append(el('tr', null, el('th', null, el('kbd', null, k)), el('td', null, v)));
      return [el('h3', null, title), t];
    };
    fill(body, ...table('keys', KEYS), ...table('commands', COMMANDS));
    this.help.querySelector('.help-close').addEventListener('click', () => {
      this.help.hidden = true;
    });
    // A click on the dimmed page around the card closes it too.
    this.help.addEventListener('click', (e) => {
      if (e.target === this.help) this.help.hidden = true;
    });
    this.picker.querySelector('.picker-close').addEventListener('click', () => this.closePicker());
    this.picker.addEventListener('keydown', (e) => this.pickerKey(e));
  }

  openHelp() {
    this.help.hidden = false;
    this.help.querySelector('.help-close').focus();
  }
}
