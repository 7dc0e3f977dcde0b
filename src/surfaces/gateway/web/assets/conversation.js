// The open session's conversation: its transcript (the `transcript`
// answer), then its live events on top. Model text goes through the
// markdown renderer (DOM nodes only); tool calls are <details> one-liners.

import { argsLine, badge, clean, clock, el, fill, num } from './dom.js';
import { render as markdown } from './markdown.js';
import { highlight } from './highlight.js';

// `done`: a call read back from the transcript, which keeps its output
// but not whether it succeeded (the TUI shows such a call as restored).
const STATES = ['running', 'ok', 'failed', 'denied', 'done'];
const MAX_ENTRIES = 3000;

export class Conversation {
  constructor(root) {
    this.root = root;
    this.session = null;
    // Whether the view follows the newest entry, and where the reader
    // was: kept while the pane is hidden (a phone's other tab), where the
    // element measures 0 and loses its scroll position.
    this.follow = true;
    this.readTop = 0;
    root.addEventListener('scroll', () => this.remember(), { passive: true });
    this.reset(null);
  }

  remember() {
    if (this.root.clientHeight === 0) return;
    this.follow = this.measureBottom();
    this.readTop = this.root.scrollTop;
  }

  /** The pane is shown again: at the bottom if it followed, else where it was read. */
  shown() {
    if (this.follow) this.scrollDown();
    else this.root.scrollTop = this.readTop;
  }

  /** Empties the view for `session` (null: nothing open). */
  reset(session, placeholder) {
    this.session = session;
    this.openText = null;
    this.openReasoning = null;
    this.tools = new Map();
    this.userTurns = [];
    this.truncated = false;
    this.follow = true;
    fill(this.root);
    if (placeholder) this.root.append(el('p', 'placeholder', placeholder));
  }

  measureBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 48;
  }

  atBottom() {
    return this.root.clientHeight === 0 ? this.follow : this.measureBottom();
  }

  /** Appends a node, keeping the view at the bottom when it was there. */
  add(node) {
    if (this.bulk) {
      this.root.append(node);
      return node;
    }
    const stick = this.atBottom();
    const placeholder = this.root.querySelector(':scope > .placeholder');
    if (placeholder) placeholder.remove();
    this.root.append(node);
    // A session left open for days keeps a bounded page: the oldest
    // entries go (the transcript keeps them; reopening shows the newest).
    if (this.root.childElementCount > MAX_ENTRIES) {
      for (let n = 0; n < 200; n += 1) this.root.firstElementChild.remove();
    }
    if (stick) this.scrollDown();
    return node;
  }

  scrollDown() {
    this.root.scrollTop = this.root.scrollHeight;
    this.follow = true;
  }

  // ---- the transcript ----

  /** Renders a `transcript` reply; `busy`: the session's turn still runs. */
  loadTranscript(reply, busy) {
    // Hundreds of items: no layout read per item, one scroll at the end.
    this.bulk = true;
    this.truncated = Boolean(reply.truncated);
    if (reply.truncated) this.add(el('div', 'notice', 'older messages are not shown (the transcript keeps them)'));
    const items = Array.isArray(reply.items) ? reply.items : [];
    for (const item of items) this.item(item);
    this.closeText();
    if (!busy) {
      for (const tool of this.tools.values()) if (tool.state === 'running') this.setState(tool, 'failed', 'no result recorded');
    }
    this.bulk = false;
    this.scrollDown();
  }

  item(item) {
    switch (item.item) {
      case 'user': {
        this.closeText();
        const node = this.user(item.origin, item.text, item.ts);
        this.userTurns.push({ turn: this.userTurns.length + 1, text: clean(item.text), ts: item.ts, node });
        break;
      }
      case 'assistant': {
        if (typeof item.text === 'string' && item.text.trim()) {
          const msg = this.assistant(item.ts, item.provider);
          msg.text = item.text;
          this.paint(msg);
        }
        this.closeText();
        if (item.interrupted === true) this.notice('interrupted');
        for (const call of Array.isArray(item.tool_calls) ? item.tool_calls : []) this.toolCall(call);
        break;
      }
      case 'tool_result': {
        const tool = this.tools.get(clean(item.id));
        if (tool) {
          // Older transcripts keep neither `outcome` nor `diff`.
          const outcome = ['ok', 'failed', 'denied'].includes(item.outcome) ? item.outcome : (item.denied ? 'denied' : '');
          if (outcome) this.setState(tool, outcome);
          else this.setState(tool, 'done', 'from the transcript: success is not recorded');
          this.output(tool, item.output);
          this.diff(tool, item.diff);
        }
        break;
      }
      case 'compaction':
        this.compaction(item);
        break;
      case 'rewound':
        this.closeText();
        this.cut(item.turn);
        this.add(el('div', 'divider rewound', `rewound to before message ${num(item.turn)}`));
        if (typeof item.turn === 'number') this.userTurns.length = Math.max(0, Math.min(this.userTurns.length, item.turn - 1));
        break;
      case 'forked_from':
        this.add(el('div', 'divider forked', `forked from ${clean(item.session)}`));
        break;
      default:
        break;
    }
  }

  /**
   * A rewind: user message `turn` and all after it leave the view, as the
   * session (and the TUI) no longer has them; the transcript keeps them.
   * Not on a cut-short transcript, whose messages cannot be numbered.
   */
  cut(turn) {
    if (this.truncated || typeof turn !== 'number') return;
    const from = this.userTurns[turn - 1];
    if (!from || !from.node || from.node.parentNode !== this.root) return;
    while (from.node.nextSibling) from.node.nextSibling.remove();
    from.node.remove();
    for (const [id, tool] of this.tools) if (!tool.node.isConnected) this.tools.delete(id);
  }

  // ---- entries ----

  user(origin, body, ts, queued) {
    const msg = el('div', `msg user${queued ? ' queued' : ''}`);
    msg.dataset.role = 'user';
    const head = el('div', 'msg-head', badge(origin), el('span', 'msg-time', ts ? clock(ts) : clock(new Date().toISOString())));
    if (queued) head.append(el('span', 'queued-tag', 'queued'));
    msg.append(head, el('div', 'msg-body plain', body));
    this.add(msg);
    return msg;
  }

  assistant(ts, provider) {
    const node = el('div', 'msg assistant');
    node.dataset.role = 'assistant';
    const head = el('div', 'msg-head', el('span', 'who', 'egirl'));
    if (provider) head.append(el('span', 'msg-provider', provider));
    head.append(el('span', 'msg-time', ts ? clock(ts) : clock(new Date().toISOString())));
    const body = el('div', 'msg-body md');
    node.append(head, body);
    this.add(node);
    return { node, body, text: '', scheduled: false };
  }

  paint(msg) {
    msg.scheduled = false;
    const stick = !this.bulk && this.atBottom();
    msg.body.replaceChildren(markdown(msg.text));
    if (stick) this.scrollDown();
  }

  schedule(msg) {
    if (msg.scheduled) return;
    msg.scheduled = true;
    // rAF paints once per frame; the timeout paints in a hidden tab. A long
    // answer is painted less often: each paint renders all of it again.
    const go = () => msg.scheduled && this.paint(msg);
    if (msg.text.length > 8000) {
      setTimeout(() => requestAnimationFrame(go), 150);
      setTimeout(go, 400);
    } else {
      requestAnimationFrame(go);
      setTimeout(go, 120);
    }
  }

  closeText() {
    if (this.openText) {
      const msg = this.openText;
      msg.node.classList.remove('streaming');
      this.paint(msg);
    }
    this.openText = null;
    this.openReasoning = null;
  }

  delta(text) {
    if (!this.openText) {
      this.openText = this.assistant();
      this.openText.node.classList.add('streaming');
    }
    this.openText.text += text;
    this.schedule(this.openText);
  }

  reasoning(text) {
    if (!this.openReasoning) {
      const body = el('div', 'reasoning-body');
      const node = el('details', 'reasoning', el('summary', null, 'reasoning'), body);
      this.openReasoning = { node, body };
      this.add(node);
    }
    // Appended: setting the whole text again per delta was quadratic.
    this.openReasoning.body.append(document.createTextNode(clean(text)));
  }

  final(text) {
    if (this.openText) {
      if (typeof text === 'string' && text.trim() && text !== this.openText.text) this.openText.text = text;
      this.closeText();
      return;
    }
    if (typeof text === 'string' && text.trim()) {
      const msg = this.assistant();
      msg.text = text;
      this.paint(msg);
    }
    this.openReasoning = null;
  }

  line(cls, message) {
    return this.add(el('div', cls, message));
  }

  notice(message) {
    return this.line('notice', message);
  }

  error(message) {
    this.closeText();
    return this.line('error', message);
  }

  routing(ev) {
    const target = clean(ev.role || ev.target);
    const conf = typeof ev.confidence === 'number' ? ev.confidence.toFixed(2) : '';
    const node = el(
      'div',
      `routing routing-${ev.target === 'remote' ? 'remote' : 'local'}`,
      el('span', 'routing-target', `→ ${target}`),
      el('span', 'routing-model', clean(ev.model || ev.provider)),
      el('span', 'routing-reason', clean(ev.reason)),
      conf && el('span', 'routing-conf', conf),
    );
    this.add(node);
  }

  escalation(ev) {
    this.closeText();
    this.line('notice escalation', `escalated to ${clean(ev.to)}: ${clean(ev.reason)}${ev.trigger ? ` (${clean(ev.trigger)})` : ''}`);
  }

  compaction(item) {
    this.closeText();
    const label = `compacted ${num(item.summarized_messages)} messages · ${num(item.before_tokens)} → ${num(item.after_tokens)} tokens${item.model ? ` · by ${clean(item.model)}` : ''}`;
    const node = el('details', 'divider compaction', el('summary', null, label), el('div', 'summary plain', item.summary));
    this.add(node);
  }

  // ---- tool calls ----

  toolCall(call) {
    this.closeText();
    const id = clean(call.id);
    const stateNode = el('span', 'state state-running', 'running');
    const extra = el('span', 'tool-extra');
    const summary = el(
      'summary',
      null,
      el('span', 'tool-name', clean(call.name)),
      el('span', 'tool-args', argsLine(call.arguments)),
      stateNode,
      extra,
    );
    const body = el('div', 'tool-body');
    const args = el('pre', 'tool-argsfull');
    let pretty = '';
    try {
      pretty = JSON.stringify(call.arguments, null, 2);
    } catch {
      pretty = '';
    }
    highlight(clean(pretty || ''), 'json', args);
    body.append(args);
    if (call.sandbox) body.append(el('div', 'tool-sandbox', `sandbox: ${clean(call.sandbox)}`));
    const node = el('details', 'tool', summary, body);
    node.dataset.toolId = id;
    const tool = { id, node, body, stateNode, extra, name: clean(call.name), args: call.arguments, state: 'running', approval: null, progress: null };
    this.tools.set(id, tool);
    this.add(node);
    return tool;
  }

  setState(tool, state, why) {
    if (!STATES.includes(state)) return;
    tool.state = state;
    tool.stateNode.className = `state state-${state}`;
    tool.stateNode.textContent = state;
    tool.node.dataset.state = state;
    if (why) tool.stateNode.title = why;
  }

  output(tool, output, ms) {
    if (typeof ms === 'number') tool.extra.textContent = ` ${num(ms)} ms`;
    if (typeof output === 'string' && output !== '') {
      const old = tool.body.querySelector(':scope > .tool-output');
      if (old) old.remove();
      tool.body.append(el('pre', 'tool-output', output));
    }
  }

  /** A file tool's change: `+`/`-` lines coloured, hunks marked. */
  diff(tool, diff) {
    if (!diff || typeof diff !== 'object') return;
    tool.extra.textContent += ` +${num(diff.added)} −${num(diff.removed)}`;
    const box = el('pre', 'diff');
    box.append(el('div', 'diff-path', clean(diff.path)));
    for (const line of clean(diff.text).split('\n')) {
      let cls = 'ctx';
      if (line.startsWith('+')) cls = 'add';
      else if (line.startsWith('-')) cls = 'del';
      else if (line.startsWith('@@')) cls = 'hunk';
      box.append(el('div', cls, line === '' ? ' ' : line));
    }
    tool.body.append(box);
  }

  findAwaiting(ev) {
    const list = [...this.tools.values()].reverse();
    return list.find(
      (t) =>
        t.state === 'running' &&
        !t.approval &&
        t.name === clean(ev.tool) &&
        t.args &&
        typeof t.args === 'object' &&
        Object.values(t.args).some((v) => typeof v === 'string' && clean(v) === clean(ev.command)),
    );
  }

  // ---- live events of this session ----

  apply(ev) {
    switch (ev.type) {
      case 'turn_started': {
        this.closeText();
        const queued = [...this.root.querySelectorAll('.msg.user.queued')].find(
          (m) => m.querySelector('.msg-body').textContent === clean(ev.text),
        );
        if (queued) {
          queued.classList.remove('queued');
          const tag = queued.querySelector('.queued-tag');
          if (tag) tag.remove();
        } else if (ev.origin !== 'heartbeat') this.user(ev.origin, ev.text);
        this.userTurns.push({ turn: this.userTurns.length + 1, text: clean(ev.text), ts: new Date().toISOString() });
        break;
      }
      case 'queued':
        this.user(ev.origin, ev.text, null, true);
        break;
      case 'routing':
        this.routing(ev);
        break;
      case 'delta':
        this.delta(typeof ev.text === 'string' ? ev.text : '');
        break;
      case 'reasoning':
        this.reasoning(ev.text);
        break;
      case 'final':
        this.final(ev.text);
        break;
      case 'tool_call':
        this.toolCall(ev);
        break;
      case 'approval_request': {
        const tool = this.findAwaiting(ev);
        if (tool) {
          tool.approval = clean(ev.id);
          tool.extra.textContent = ' · awaiting approval';
        }
        break;
      }
      case 'approval_decision': {
        const tool = [...this.tools.values()].find((t) => t.approval === clean(ev.id));
        if (tool) {
          tool.extra.textContent = ` · ${ev.decision === 'denied' ? 'denied' : 'approved'} by ${clean(ev.by)}`;
          if (ev.decision === 'denied') this.setState(tool, 'denied');
        }
        break;
      }
      case 'tool_result': {
        const tool = this.tools.get(clean(ev.id));
        if (!tool) break;
        if (tool.state !== 'denied') this.setState(tool, ev.success ? 'ok' : 'failed');
        tool.extra.textContent = '';
        this.output(tool, ev.output, ev.duration_ms);
        this.diff(tool, ev.diff);
        break;
      }
      case 'tool_progress': {
        const tool = this.tools.get(clean(ev.id));
        if (!tool) break;
        if (!tool.progress) {
          tool.progress = el('pre', 'tool-progress');
          tool.body.append(tool.progress);
        }
        tool.progress.append(text(ev.text));
        break;
      }
      case 'escalation':
        this.escalation(ev);
        break;
      case 'context_trimmed':
        this.notice(`left out ${num(ev.dropped_messages)} older messages to fit the context window (${num(ev.prompt_tokens)}/${num(ev.context_length)} tokens)`);
        break;
      case 'notice':
        this.notice(ev.message);
        break;
      case 'error':
        this.error(ev.message);
        break;
      case 'compaction':
        this.compaction(ev);
        break;
      case 'turn_ended':
        this.closeText();
        if (ev.interrupted) this.notice('interrupted');
        break;
      case 'forked':
        this.notice(`forked into ${clean(ev.new_session)}`);
        break;
      case 'memory_hits':
        this.notice(`memory: ${Array.isArray(ev.hits) ? ev.hits.length : 0} hits for “${clean(ev.query)}” (memory pane)`);
        break;
      default:
        break;
    }
  }
}

function text(value) {
  return document.createTextNode(`${clean(value)}\n`);
}
