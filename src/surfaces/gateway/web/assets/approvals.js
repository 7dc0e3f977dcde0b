// Approval requests from every session (exec, MCP, web_fetch host,
// delegation, escalation), with the modal's choices, and who decided once
// any surface answered. The count goes into the title and the badges.

import { badge, button, clean, el, fill } from './dom.js';
import { highlight } from './highlight.js';
import { notify } from './notify.js';

const KEEP_DECIDED = 10;

// Format characters that show as nothing (zero-width, direction marks,
// soft hyphen; the daemon strips the same from device names). In what a
// card asks to approve they are named, so that nothing differs unseen.
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u2060-\u206f\ufeff]/g;

function shown(value) {
  return clean(value).replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

const SCOPES = {
  once: 'approved once',
  session: 'approved for the session',
  always: 'approved always',
  outside_sandbox: 'approved outside the sandbox',
};

export class Approvals {
  constructor(root, link, onCount, onOpen) {
    this.onOpen = onOpen;
    this.root = root;
    this.link = link;
    this.onCount = onCount;
    this.items = new Map();
    this.empty = el('p', 'empty', 'no approval waits');
    root.append(this.empty);
  }

  get pending() {
    let n = 0;
    for (const a of this.items.values()) if (!a.decided) n += 1;
    return n;
  }

  /** An `approval_request` event (fresh, or re-sent after hello/resync). */
  request(ev) {
    const id = clean(ev.id);
    if (!id || this.items.has(id)) return;
    const card = this.card(ev, id);
    this.items.set(id, { id, card, decided: false, ev });
    this.root.prepend(card);
    this.changed();
    const what = ev.tool === 'exec' ? `$ ${clean(ev.command)}` : `${clean(ev.tool)}: ${clean(ev.command)}`;
    notify(`approval needed (${clean(ev.session)})`, what.slice(0, 180), `approval-${id}`);
  }

  card(ev, id) {
    const card = el('div', 'approval');
    card.dataset.approval = id;
    const tool = clean(ev.tool);
    const mcp = tool.startsWith('mcp__');
    const session = button('approval-session', clean(ev.session), () => this.onOpen(clean(ev.session)), 'open this session');
    card.append(el('div', 'approval-head', el('span', 'approval-tool', tool), badge(ev.origin), session));
    const prompt = tool === 'exec' ? '$ ' : tool === 'web_fetch' ? 'GET ' : '';
    const code = el('code');
    highlight(shown(ev.command), mcp ? 'json' : tool === 'exec' ? 'bash' : '', code);
    card.append(el('pre', 'approval-command', el('span', 'prompt', prompt), code));
    if (ev.cwd) card.append(el('div', 'approval-detail', el('span', 'label', mcp ? 'mcp ' : 'cwd '), shown(ev.cwd)));
    if (ev.sandbox) {
      card.append(
        el('div', 'approval-detail sandbox', ev.escalation ? `sandbox: none this time (it failed in ${clean(ev.sandbox)})` : `sandbox: ${clean(ev.sandbox)}`),
      );
    }
    const rule = ev.rule && !ev.escalation ? shown(ev.rule) : null;
    if (rule) {
      const covers = ev.rule_covers ? ` — remembers ${shown(ev.rule_covers)}` : '';
      card.append(el('div', 'approval-detail rule', el('span', 'label', 'rule '), el('code', null, rule), covers));
    } else if (tool === 'exec' && !ev.escalation) {
      card.append(el('div', 'approval-detail warn', 'shell syntax (pipe, redirect, chaining, substitution): always asked, never a rule'));
    }
    if (ev.escalation) {
      card.append(el('div', 'approval-detail warn', 'The sandbox refused it:'), el('pre', 'approval-escalation', shown(ev.escalation)));
    }
    card.append(this.actions(id, ev, rule), el('div', 'decided-by'));
    return card;
  }

  actions(id, ev, rule) {
    const box = el('div', 'approval-actions');
    const choose = (decision) => (e) => this.decide(id, decision, e.currentTarget);
    const add = (decision, label, title) => {
      const b = button(`decision decision-${decision}`, label, choose(decision), title);
      b.dataset.decision = decision;
      box.append(b);
      return b;
    };
    if (ev.escalation) {
      add('approved_outside_sandbox', 'run once outside the sandbox');
    } else {
      add('approved_once', 'once');
      if (rule) {
        add('approved_for_session', `${rule} · this session`, `allow \`${rule}\` for the rest of this session`);
        add('approved_always', `${rule} · always`, `remember \`${rule}\` for good (asks you to confirm)`);
      }
    }
    add('denied', 'deny');
    return box;
  }

  decide(id, decision, btn) {
    const item = this.items.get(id);
    if (!item || item.decided) return;
    // Remembering a rule for good takes a second click, as the TUI's `p` then Enter.
    if (decision === 'approved_always' && !btn.classList.contains('armed')) {
      btn.classList.add('armed');
      btn.dataset.label = btn.textContent;
      btn.textContent = 'click again: always allow';
      setTimeout(() => {
        if (btn.isConnected && btn.classList.contains('armed')) {
          btn.classList.remove('armed');
          btn.textContent = btn.dataset.label;
        }
      }, 5000);
      return;
    }
    const sent = this.link.op({ type: 'approval_decision', id, decision, by: 'web' });
    const note = item.card.querySelector('.decided-by');
    if (!sent.sent) {
      note.textContent = 'not connected: not sent';
      return;
    }
    item.op = sent.id;
    for (const b of item.card.querySelectorAll('button')) b.disabled = true;
    note.textContent = 'sent…';
  }

  /** An `approval_decision` event: whoever answered, here or anywhere. */
  decision(ev) {
    const id = clean(ev.id);
    const item = this.items.get(id);
    if (!item) return;
    item.decided = true;
    const what = ev.decision === 'denied' ? 'denied' : SCOPES[ev.scope] || 'approved';
    item.card.classList.add('decided', ev.decision === 'denied' ? 'was-denied' : 'was-approved');
    for (const b of item.card.querySelectorAll('button')) b.disabled = true;
    item.card.querySelector('.decided-by').textContent = `${what} by ${clean(ev.by)}`;
    this.prune();
    this.changed();
  }

  /** An op of ours the server did not take: the buttons work again. */
  rejected(frame) {
    for (const item of this.items.values()) {
      if (item.op && item.op === frame.id && !item.decided) {
        for (const b of item.card.querySelectorAll('button')) b.disabled = false;
        item.card.querySelector('.decided-by').textContent = `not taken: ${clean(frame.message)}`;
        return true;
      }
    }
    return false;
  }

  /** After a resync: requests not re-sent were answered meanwhile. */
  forgetPending() {
    for (const [id, item] of this.items) {
      if (!item.decided) {
        item.card.remove();
        this.items.delete(id);
      }
    }
    this.changed();
  }

  prune() {
    const decided = [...this.items.values()].filter((a) => a.decided);
    for (const old of decided.slice(0, Math.max(0, decided.length - KEEP_DECIDED))) {
      old.card.remove();
      this.items.delete(old.id);
    }
  }

  changed() {
    const n = this.pending;
    this.empty.hidden = n > 0 || this.items.size > 0;
    if (!this.empty.isConnected) this.root.append(this.empty);
    this.onCount(n);
  }

  clear() {
    this.items.clear();
    fill(this.root, this.empty);
    this.changed();
  }
}
