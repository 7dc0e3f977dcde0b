// The sessions list: every session the core knows and the newest on disk,
// with origin badges, unread counts (news in sessions not open), last
// activity and a title; the open one marked `open`.

import { ago, badge, clean, el, oneLine, validSessionId } from './dom.js';

export class Sessions {
  constructor(list, onOpen) {
    this.list = list;
    this.onOpen = onOpen;
    this.map = new Map();
    this.open = null;
    this.nodes = new Map();
    list.addEventListener('click', (e) => {
      const li = e.target.closest('li[data-session]');
      if (li) this.onOpen(li.dataset.session);
    });
    list.addEventListener('keydown', (e) => this.key(e));
    setInterval(() => this.refreshTimes(), 30_000);
  }

  /** The `sessions` answer (and the live ones of `hello`). */
  load(sessions, live) {
    for (const s of Array.isArray(sessions) ? sessions : []) {
      if (!s || !validSessionId(s.id)) continue;
      const old = this.map.get(s.id);
      this.map.set(s.id, {
        id: s.id,
        origin: clean(s.origin || (old && old.origin) || 'cli'),
        last: Date.parse(s.last_activity) || (old && old.last) || 0,
        title: oneLine(s.title || (old && old.title) || '', 80),
        messages: typeof s.messages === 'number' ? s.messages : 0,
        live: Boolean(s.live),
        busy: Boolean(s.busy),
        unread: old ? old.unread : 0,
      });
    }
    for (const s of Array.isArray(live) ? live : []) {
      if (!s || !validSessionId(s.id)) continue;
      const entry = this.ensure(s.id, s.origin);
      entry.busy = Boolean(s.busy);
      entry.live = true;
    }
    this.render();
  }

  ensure(id, origin) {
    let entry = this.map.get(id);
    if (!entry) {
      entry = { id, origin: clean(origin || 'web'), last: Date.now(), title: '', messages: 0, live: true, busy: false, unread: 0 };
      this.map.set(id, entry);
    }
    return entry;
  }

  get(id) {
    return this.map.get(id);
  }

  /** An event of any session: activity, busy, unread, title. */
  event(ev) {
    if (!validSessionId(ev.session)) return;
    const entry = this.ensure(ev.session, ev.origin);
    entry.last = Date.now();
    entry.live = true;
    // A session's badge is who spoke last: a command's events carry the
    // origin of whoever sent it, not the conversation's.
    if (ev.origin && (ev.type === 'turn_started' || ev.type === 'queued')) entry.origin = clean(ev.origin);
    if (ev.type === 'turn_started') {
      entry.busy = true;
      if (!entry.title) entry.title = oneLine(ev.text, 80);
      entry.messages += 1;
    }
    if (ev.type === 'turn_ended') entry.busy = false;
    const news = ev.type === 'final' || (ev.type === 'turn_started' && ev.origin !== 'heartbeat');
    if (news && ev.session !== this.open) entry.unread += 1;
    this.later();
  }

  /** Renders soon: a stream of deltas re-sorts the list once per tick. */
  later() {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.render();
    }, 80);
  }

  setOpen(id) {
    this.open = id;
    if (id) {
      const entry = this.ensure(id, 'web');
      entry.unread = 0;
    }
    this.render();
  }

  ordered() {
    return [...this.map.values()].sort((a, b) => b.last - a.last || (a.id < b.id ? -1 : 1));
  }

  render() {
    const keep = new Set();
    const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('li[data-session]');
    let prev = null;
    for (const s of this.ordered()) {
      keep.add(s.id);
      let li = this.nodes.get(s.id);
      if (!li) {
        li = this.create(s);
        this.nodes.set(s.id, li);
      }
      this.update(li, s);
      const want = prev ? prev.nextSibling : this.list.firstChild;
      if (want !== li) this.list.insertBefore(li, want);
      prev = li;
    }
    for (const [id, li] of this.nodes) {
      if (!keep.has(id)) {
        li.remove();
        this.nodes.delete(id);
      }
    }
    if (!this.list.querySelector('li.open') && this.list.firstElementChild) this.list.firstElementChild.tabIndex = 0;
    if (focused && focused.isConnected) focused.focus();
    // The phone's sessions tab says how much is unread elsewhere.
    const total = document.querySelector('#tabs .unread-total');
    if (total) {
      const n = this.unreadTotal();
      total.textContent = String(n);
      total.hidden = n === 0;
    }
  }

  create(s) {
    const li = el('li', 'session');
    li.dataset.session = s.id;
    li.setAttribute('role', 'button');
    li.append(
      el('div', 'session-top', badge(s.origin), el('span', 'title'), el('span', 'unread')),
      el('div', 'session-bottom', el('span', 'sid', s.id), el('span', 'busy', '●'), el('span', 'when')),
    );
    return li;
  }

  update(li, s) {
    li.classList.toggle('open', s.id === this.open);
    // One tab stop for the list (the open session); arrows move within it.
    li.tabIndex = s.id === this.open ? 0 : -1;
    li.classList.toggle('is-busy', s.busy);
    const b = li.querySelector('.badge');
    const fresh = badge(s.origin);
    if (b.textContent !== fresh.textContent || b.title !== fresh.title) b.replaceWith(fresh);
    const title = s.title || s.id;
    li.querySelector('.title').textContent = title;
    li.title = `${s.id}\n${s.origin}`;
    const unread = li.querySelector('.unread');
    unread.textContent = String(s.unread);
    unread.hidden = s.unread === 0;
    const when = li.querySelector('.when');
    when.textContent = s.last ? ago(s.last) : '';
    when.dataset.t = String(s.last || '');
    li.querySelector('.busy').hidden = !s.busy;
  }

  refreshTimes() {
    for (const when of this.list.querySelectorAll('.when')) {
      const t = Number(when.dataset.t);
      if (t) when.textContent = ago(t);
    }
  }

  /** Arrow keys move between sessions; Enter/Space opens. */
  key(e) {
    const li = e.target.closest('li[data-session]');
    if (!li) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.onOpen(li.dataset.session);
    } else if (e.key === 'ArrowDown' || e.key === 'j') {
      e.preventDefault();
      if (li.nextElementSibling) li.nextElementSibling.focus();
    } else if (e.key === 'ArrowUp' || e.key === 'k') {
      e.preventDefault();
      if (li.previousElementSibling) li.previousElementSibling.focus();
    }
  }

  focus() {
    const target = this.list.querySelector('li.open') || this.list.querySelector('li');
    if (target) target.focus();
  }

  unreadTotal() {
    let n = 0;
    for (const s of this.map.values()) n += s.unread;
    return n;
  }
}
