// The web UI: a client of the gateway protocol like the attached TUI.
// This module wires the socket to the views: sessions, the open
// conversation, approvals, the side panes, the input.

import { Approvals } from './approvals.js';
import { Conversation } from './conversation.js';
import { clean, newSessionId, num, oneLine, store, validSessionId } from './dom.js';
import { Input } from './input.js';
import { notify, setTitle } from './notify.js';
import { Panes } from './panes.js';
import { Sessions } from './sessions.js';
import { Link } from './socket.js';

const OPEN_KEY = 'egirl:open';
const LONG_TURN_MS = 10_000;

class App {
  constructor() {
    this.open = null;
    this.loading = null;
    this.ready = false;
    this.needsReload = false;
    this.asked = new Map();
    this.sent = new Map();
    this.turnStarts = new Map();
    this.lastFinal = new Map();
    this.statsTimer = null;
    this.connection = document.querySelector('#connection');
    this.link = new Link({
      hello: (f, o) => this.onHello(f, o),
      event: (seq, ev, o) => this.onEvent(ev, o),
      status: (f) => this.panes.setStatus(f),
      resync: () => this.onResync(),
      rejected: (f) => this.onRejected(f),
      state: (s) => this.setConnection(s),
      signedOut: (m) => this.onSignedOut(m),
      notice: (m) => this.notice(m),
    });
    this.conversation = new Conversation(document.querySelector('#conversation'));
    this.sessions = new Sessions(document.querySelector('#sessions'), (id) => this.openSession(id));
    this.approvals = new Approvals(document.querySelector('#approvals'), this.link, (n) => this.onApprovalCount(n), (id) => this.openSession(id));
    this.panes = new Panes(this);
    this.input = new Input(this);
    this.wireChrome();
    const last = store.get(OPEN_KEY);
    if (validSessionId(last)) this.openSession(last, { quiet: true });
    else this.showEmpty();
    this.link.connect();
    setInterval(() => this.refreshCron(), 60_000);
  }

  wireChrome() {
    document.querySelector('#new-session').addEventListener('click', () => this.newSession());
    document.querySelector('#approval-count').addEventListener('click', () => this.showPane('approvals'));
    document.querySelector('#help-button').addEventListener('click', () => this.input.openHelp());
    for (const tab of document.querySelectorAll('#tabs button[data-pane]')) {
      tab.addEventListener('click', () => this.showPane(tab.dataset.pane));
    }
    document.body.dataset.pane = 'conversation';
  }

  showEmpty() {
    this.conversation.reset(null, 'Pick a session, or type below to start a new one.');
    this.input.switchTo(null);
  }

  // ---- connection ----

  setConnection(state) {
    const text = state === 'connected' ? 'connected' : state === 'signed out' ? 'signed out' : 'reconnecting…';
    this.connection.textContent = text;
    this.connection.dataset.state = state === 'connected' ? 'up' : state === 'signed out' ? 'out' : 'down';
    this.panes.setConnection(text);
  }

  onSignedOut(message) {
    this.setConnection('signed out');
    this.notice(`signed out: ${clean(message)}`, 'error');
    setTimeout(() => location.assign('/'), 1500);
  }

  async signOut() {
    try {
      await fetch('/api/signout', { method: 'POST', credentials: 'same-origin' });
    } catch {
      /* the cookie goes when the daemon answers; the page leaves anyway */
    }
    location.assign('/');
  }

  async onHello(hello, { fresh }) {
    this.panes.setHello(hello);
    const model = document.querySelector('#model');
    const ctx = typeof hello.context_length === 'number' && hello.context_length > 0 ? ` · ${num(hello.context_length)} ctx` : '';
    model.textContent = hello.model ? `${clean(hello.model)}${ctx}` : '';
    if (fresh) this.approvals.clear();
    // The live sessions (which are busy) at once; the list's answer follows.
    this.sessions.load([], hello.sessions);
    // The transcript is asked first: events of the open session that come
    // meanwhile wait for it instead of landing on an empty view.
    if (this.open && (fresh || this.needsReload)) this.openSession(this.open, { quiet: true });
    await this.loadSessions(hello.sessions);
    if (!this.ready) {
      this.ready = true;
      document.body.dataset.ready = '1';
    }
    this.refreshCron();
    this.refreshStats();
  }

  async loadSessions(live) {
    const reply = await this.link.query({ kind: 'sessions' });
    if (reply.kind === 'sessions') this.sessions.load(reply.sessions, live);
    else this.sessions.load([], live);
  }

  onResync() {
    this.approvals.forgetPending();
    this.loadSessions([]);
    if (this.open) this.openSession(this.open, { quiet: true });
    this.refreshStats();
  }

  onRejected(frame) {
    if (this.approvals.rejected(frame)) return;
    const op = this.sent.get(frame.id);
    this.sent.delete(frame.id);
    if (op && op.type === 'user_message' && op.session === this.open) {
      this.input.restore(op.text);
      this.notice(`not sent: ${clean(frame.message)} (the message is back in the box)`, 'error');
      return;
    }
    this.notice(`refused: ${clean(frame.message)}`, 'error');
  }

  refreshCron() {
    if (!this.link.connected) return;
    this.link.query({ kind: 'cron' }).then((r) => (r.kind === 'cron' ? this.panes.cronAnswer(r) : this.panes.cronFailed(r.message || 'cron unavailable')));
  }

  refreshStats() {
    if (!this.link.connected) return;
    this.link.query({ kind: 'stats' }).then((r) => r.kind === 'stats' && this.panes.statsAnswer(r));
  }

  // ---- events ----

  onEvent(ev, { replayed }) {
    if (typeof ev.session !== 'string') return;
    // An event of no session (an MCP server's notice, docs/protocol.md):
    // shown where the user is looking, never made a session.
    if (ev.session === '') {
      if (!replayed && ev.type === 'notice') this.notice(clean(ev.message));
      return;
    }
    if (ev.type === 'approval_request') {
      this.approvals.request(ev);
      if (replayed) return;
      this.panes.toolApproval(ev);
    }
    if (replayed) return;
    this.sessions.event(ev);
    this.side(ev);
    this.timing(ev);
    if (ev.session === this.open) {
      if (this.loading && this.loading.id === ev.session) this.loading.buffer.push(ev);
      else this.conversation.apply(ev);
    }
    this.timeline(ev);
  }

  /** What the side panes and the approvals take from every session. */
  side(ev) {
    switch (ev.type) {
      case 'routing':
        return this.panes.routed(ev);
      case 'escalation':
        return this.panes.escalated(ev);
      case 'tool_call':
        return this.panes.toolCall(ev);
      case 'tool_result':
        return this.panes.toolResult(ev);
      case 'approval_decision':
        this.approvals.decision(ev);
        return this.panes.toolDecision(ev);
      case 'memory_hits':
        return this.panes.memoryHits(ev);
      case 'usage':
        return this.panes.usage(ev);
      default:
        return undefined;
    }
  }

  /** A turn longer than 10 s that ends: a notification (when permitted). */
  timing(ev) {
    if (ev.type === 'turn_started') this.turnStarts.set(ev.session, Date.now());
    if (ev.type === 'final') this.lastFinal.set(ev.session, ev.text);
    if (ev.type !== 'turn_ended') return;
    const started = this.turnStarts.get(ev.session);
    this.turnStarts.delete(ev.session);
    clearTimeout(this.statsTimer);
    this.statsTimer = setTimeout(() => this.refreshStats(), 2000);
    if (started && Date.now() - started > LONG_TURN_MS) {
      const secs = Math.round((Date.now() - started) / 1000);
      notify(`turn ended in ${clean(ev.session)} (${secs} s)`, oneLine(this.lastFinal.get(ev.session) || (ev.interrupted ? 'interrupted' : ''), 160), `turn-${ev.session}`);
    }
    this.lastFinal.delete(ev.session);
  }

  /** Forks and rewinds: ours move the view. */
  timeline(ev) {
    const kind = ev.submission ? this.asked.get(ev.submission) : undefined;
    if (ev.type === 'forked' && kind === 'fork' && validSessionId(ev.new_session)) {
      this.asked.delete(ev.submission);
      this.openSession(ev.new_session);
      // The copy's title and origin come with the list.
      this.loadSessions([]);
    } else if (ev.type === 'rewound' && ev.session === this.open) {
      this.openSession(this.open, { quiet: true }).then(() => {
        this.notice(`rewound ${clean(ev.session)} to before message ${ev.turn} (${ev.dropped_messages} messages out; the transcript keeps them)`);
        if (kind === 'rewind' && typeof ev.text === 'string') this.input.restore(ev.text);
      });
      if (kind) this.asked.delete(ev.submission);
    }
  }

  // ---- sessions ----

  newSession() {
    this.openSession(newSessionId(), { fresh: true });
    this.input.focus();
  }

  /** Opens a session: its transcript, then the live events on top. */
  async openSession(id, { fresh = false, quiet = false, carry = false } = {}) {
    if (!validSessionId(id)) return;
    if (id !== this.open || !quiet) this.input.switchTo(id, { carry });
    this.open = id;
    store.set(OPEN_KEY, id);
    this.sessions.setOpen(id);
    setTitle(this.approvals.pending, id);
    if (!quiet) this.showPane('conversation');
    if (fresh) {
      this.loading = null;
      this.conversation.reset(id, 'A new session: type a message below.');
      return;
    }
    if (!this.link.connected) {
      // Loaded once the socket says hello.
      this.loading = null;
      this.needsReload = true;
      this.conversation.reset(id, 'waiting for the connection…');
      return;
    }
    this.conversation.reset(id, 'loading…');
    const loading = { id, buffer: [] };
    this.loading = loading;
    const reply = await this.link.query({ kind: 'transcript', session: id });
    if (this.loading !== loading) return;
    this.loading = null;
    this.conversation.reset(id);
    const entry = this.sessions.get(id);
    if (reply.kind === 'transcript') {
      this.needsReload = false;
      this.conversation.loadTranscript(reply, Boolean(entry && entry.busy));
      this.replay(loading.buffer, reply.items || []);
    } else {
      this.needsReload = reply.message === 'not connected' || reply.message === 'disconnected' || reply.message === 'reconnecting';
      let why = 'no messages yet';
      if (this.needsReload) why = 'not connected: the conversation loads on reconnect';
      else if (reply.message && !/^no session /.test(reply.message)) why = `the transcript could not be read: ${clean(reply.message)}`;
      this.conversation.reset(id, why);
      for (const ev of loading.buffer) this.conversation.apply(ev);
    }
  }

  /**
   * Events that came while the transcript loaded, less what the
   * transcript already holds (the user message, finished calls, the answer).
   */
  replay(buffer, items) {
    const users = items.filter((i) => i.item === 'user');
    const lastUser = users.length ? clean(users[users.length - 1].text) : null;
    const calls = new Set();
    const results = new Set();
    const answers = new Set();
    for (const i of items) {
      if (i.item === 'assistant') {
        if (typeof i.text === 'string') answers.add(i.text);
        for (const c of Array.isArray(i.tool_calls) ? i.tool_calls : []) calls.add(c.id);
      }
      if (i.item === 'tool_result') results.add(i.id);
    }
    const final = buffer.find((e) => e.type === 'final');
    const answered = final && answers.has(final.text);
    let skippedUser = false;
    for (const ev of buffer) {
      if (ev.type === 'turn_started' && !skippedUser && clean(ev.text) === lastUser) {
        skippedUser = true;
        continue;
      }
      if (ev.type === 'tool_call' && calls.has(ev.id)) continue;
      if (ev.type === 'tool_result' && results.has(ev.id)) continue;
      if (answered && ['delta', 'reasoning', 'final'].includes(ev.type)) continue;
      this.conversation.apply(ev);
    }
  }

  focusSessions() {
    this.showPane('sessions');
    this.sessions.focus();
  }

  showPane(name) {
    // Where the chat was read, taken before a phone's tab hides it.
    if (document.body.dataset.pane === 'conversation') this.conversation.remember();
    document.body.dataset.pane = name;
    for (const tab of document.querySelectorAll('#tabs button[data-pane]')) {
      tab.setAttribute('aria-selected', tab.dataset.pane === name ? 'true' : 'false');
    }
    if (name === 'conversation') this.conversation.shown();
    const pane = document.querySelector(`#pane-${name}`);
    if (pane && window.matchMedia('(min-width: 900px)').matches && name !== 'conversation' && name !== 'sessions') {
      pane.scrollIntoView({ block: 'nearest' });
    }
  }

  onApprovalCount(n) {
    const count = document.querySelector('#approval-count');
    count.textContent = n === 1 ? '1 approval' : `${n} approvals`;
    count.hidden = n === 0;
    const tab = document.querySelector('#tabs button[data-pane="approvals"] .tab-count');
    if (tab) {
      tab.textContent = String(n);
      tab.hidden = n === 0;
    }
    setTitle(n, this.open);
  }

  // ---- what the input asks ----

  notice(message, level = 'notice') {
    if (level === 'error') this.conversation.error(message);
    else this.conversation.notice(message);
  }

  busy() {
    const entry = this.open && this.sessions.get(this.open);
    return Boolean(entry && entry.busy);
  }

  userTurns() {
    return this.conversation.userTurns.slice();
  }

  truncatedTranscript() {
    return this.conversation.truncated;
  }

  /** Sends a message to the open session (a new one when none is open). */
  send(text) {
    if (!this.open) this.openSession(newSessionId(), { fresh: true, carry: true });
    const session = this.open;
    const op = { type: 'user_message', session, origin: 'web', text };
    const r = this.link.op(op);
    if (!r.sent) {
      this.notice('not connected: the message stays in the box; send it again once connected', 'error');
      return false;
    }
    this.sent.set(r.id, op);
    // As in any chat: what you just sent, and its answer, come into view.
    this.conversation.scrollDown();
    // Kept only to give a refused message back: the oldest go first.
    if (this.sent.size > 200) this.sent.delete(this.sent.keys().next().value);
    this.sessions.ensure(session, 'web');
    return true;
  }

  interrupt() {
    if (!this.open) return;
    const r = this.link.op({ type: 'interrupt', session: this.open });
    if (!r.sent) this.notice('not connected: could not interrupt', 'error');
  }

  /** A command for the open session; true when it was sent. */
  command(command) {
    if (!this.open) {
      this.notice(`/${command.name}: open or start a session first`);
      return false;
    }
    const r = this.link.op({ type: 'command', session: this.open, command });
    if (!r.sent) {
      this.notice('not connected: the command was not sent', 'error');
      return false;
    }
    // What it says back (a notice, a divider) comes into view.
    this.conversation.scrollDown();
    if (command.name === 'fork' || command.name === 'rewind') this.asked.set(r.id, command.name);
    if (command.name === 'clear') this.notice('cleared: the model starts this session afresh (the transcript keeps it)');
    if (command.name === 'force_target') this.notice(`the next turn goes to the ${command.target} model`);
    if (command.name === 'compact') this.notice('compacting…');
    return true;
  }

  memorySearch(query) {
    if (!this.open) this.openSession(newSessionId(), { fresh: true, carry: true });
    const r = this.link.op({ type: 'command', session: this.open, command: { name: 'memory_search', query } });
    if (!r.sent) {
      this.notice('not connected: the search was not sent', 'error');
      return;
    }
    this.panes.memoryAsked(query);
    const box = document.querySelector('#memory-query');
    if (box.value !== query) box.value = query;
  }
}

// Module scripts run after the document is parsed: the elements are there.
new App();
