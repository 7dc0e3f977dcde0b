// The side panes: routing and escalations, tool calls, memory search,
// stats, cron jobs, MCP servers and the daemon's health. Every session's
// events feed them, not only the open one's.

import { argsLine, badge, button, clean, clock, el, fill, num, oneLine, until } from './dom.js';
import { askPermission, notificationState } from './notify.js';

const KEEP = 100;

function cap(list) {
  while (list.children.length > KEEP) list.lastElementChild.remove();
}

function nowClock() {
  return clock(new Date().toISOString());
}

export class Panes {
  constructor(app) {
    this.app = app;
    this.routing = document.querySelector('#routing-list');
    this.tools = document.querySelector('#tools-list');
    this.memory = document.querySelector('#memory-hits');
    this.stats = document.querySelector('#stats-body');
    this.cron = document.querySelector('#cron-list');
    this.mcp = document.querySelector('#mcp-list');
    this.health = document.querySelector('#health-body');
    this.toolRows = new Map();
    this.statRows = [];
    this.totalCost = 0;
    this.lastRate = null;
    this.status = {};
    this.hello = null;
    this.connection = 'connecting…';
    document.querySelector('#memory-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = document.querySelector('#memory-query');
      const q = input.value.trim();
      if (q) this.app.memorySearch(q);
    });
    this.renderHealth();
    this.renderStats();
  }

  // ---- routing ----

  routed(ev) {
    const conf = typeof ev.confidence === 'number' ? ev.confidence.toFixed(2) : '';
    const li = el(
      'li',
      `route route-${ev.target === 'remote' ? 'remote' : 'local'}`,
      el('span', 'pane-time', nowClock()),
      badge(ev.origin),
      el('span', 'route-target', clean(ev.role || ev.target)),
      el('span', 'route-model', clean(ev.model)),
      conf && el('span', 'route-conf', conf),
      el('div', 'route-reason', clean(ev.reason)),
      el('div', 'pane-session', clean(ev.session)),
    );
    this.routing.prepend(li);
    cap(this.routing);
  }

  escalated(ev) {
    const li = el(
      'li',
      'route escalation',
      el('span', 'pane-time', nowClock()),
      badge(ev.origin),
      el('span', 'route-target', 'escalated'),
      el('span', 'route-model', `${clean(ev.from)} → ${clean(ev.to)}`),
      el('div', 'route-reason', `${clean(ev.reason)}${ev.trigger ? ` (${clean(ev.trigger)})` : ''}`),
      el('div', 'pane-session', clean(ev.session)),
    );
    this.routing.prepend(li);
    cap(this.routing);
  }

  // ---- tools ----

  toolCall(ev) {
    const key = `${ev.session}\u0000${ev.id}`;
    const state = el('span', 'state state-running', 'running');
    const dur = el('span', 'tool-dur');
    const li = el(
      'li',
      'tool-row',
      el('span', 'pane-time', nowClock()),
      el('span', 'tool-name', clean(ev.name)),
      state,
      dur,
      el('div', 'tool-args', argsLine(ev.arguments, 100)),
      el('div', 'pane-session', clean(ev.session)),
    );
    li.dataset.toolId = clean(ev.id);
    this.toolRows.set(key, { li, state, dur, name: clean(ev.name), args: ev.arguments, session: ev.session, approval: null, started: Date.now() });
    this.tools.prepend(li);
    cap(this.tools);
    if (this.toolRows.size > KEEP * 2) {
      const first = this.toolRows.keys().next().value;
      this.toolRows.delete(first);
    }
  }

  setToolState(row, state) {
    row.state.className = `state state-${state}`;
    row.state.textContent = state;
    row.current = state;
  }

  toolApproval(ev) {
    for (const row of [...this.toolRows.values()].reverse()) {
      const matches =
        row.session === ev.session &&
        row.name === clean(ev.tool) &&
        !row.approval &&
        row.args &&
        typeof row.args === 'object' &&
        Object.values(row.args).some((v) => typeof v === 'string' && clean(v) === clean(ev.command));
      if (matches) {
        row.approval = clean(ev.id);
        row.dur.textContent = 'awaiting approval';
        return;
      }
    }
  }

  toolDecision(ev) {
    for (const row of this.toolRows.values()) {
      if (row.approval === clean(ev.id)) {
        row.dur.textContent = '';
        if (ev.decision === 'denied') this.setToolState(row, 'denied');
      }
    }
  }

  toolResult(ev) {
    const row = this.toolRows.get(`${ev.session}\u0000${ev.id}`);
    if (!row) return;
    if (row.current !== 'denied') this.setToolState(row, ev.success ? 'ok' : 'failed');
    const diff = ev.diff && typeof ev.diff === 'object' ? ` · +${num(ev.diff.added)} −${num(ev.diff.removed)}` : '';
    row.dur.textContent = `${typeof ev.duration_ms === 'number' ? `${num(ev.duration_ms)} ms` : ''}${diff}`;
  }

  // ---- memory ----

  memoryHits(ev) {
    const hits = Array.isArray(ev.hits) ? ev.hits : [];
    fill(this.memory, el('p', 'pane-note', `${hits.length} ${hits.length === 1 ? 'hit' : 'hits'} for “${clean(ev.query)}”`));
    for (const hit of hits) {
      const where = `${clean(hit.path)}:${num(hit.start_line)}–${num(hit.end_line)}`;
      const score = typeof hit.score === 'number' ? hit.score.toFixed(3) : '';
      this.memory.append(
        el('div', 'hit', el('div', 'hit-head', el('span', 'hit-path', where), el('span', 'hit-score', score)), el('pre', 'hit-snippet', clean(hit.snippet))),
      );
    }
  }

  memoryAsked(query) {
    fill(this.memory, el('p', 'pane-note', `searching “${clean(query)}”…`));
  }

  // ---- stats ----

  statsAnswer(reply) {
    this.statRows = Array.isArray(reply.rows) ? reply.rows.map((r) => ({ ...r })) : [];
    this.totalCost = typeof reply.total_cost_usd === 'number' ? reply.total_cost_usd : 0;
    this.renderStats();
  }

  usage(ev) {
    let row = this.statRows.find((r) => r.provider === ev.provider && r.model === ev.model);
    if (!row) {
      row = { provider: clean(ev.provider), model: clean(ev.model), requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 };
      this.statRows.push(row);
    }
    row.requests += 1;
    row.input_tokens += ev.input_tokens || 0;
    row.output_tokens += ev.output_tokens || 0;
    row.cached_tokens += ev.cached_tokens || 0;
    row.cost_usd += ev.cost_usd || 0;
    this.totalCost += ev.cost_usd || 0;
    if (typeof ev.tokens_per_sec === 'number') {
      this.lastRate = { rate: ev.tokens_per_sec, model: clean(ev.model), latency: ev.latency_ms, endpoint: clean(ev.endpoint || '') };
    }
    this.renderStats();
  }

  renderStats() {
    const table = el('table', 'stats-table');
    table.append(el('thead', null, el('tr', null, ...['model', 'req', 'in', 'out', 'cached', 'USD'].map((h) => el('th', null, h)))));
    const body = el('tbody');
    for (const r of this.statRows) {
      body.append(
        el(
          'tr',
          null,
          el('td', 'stats-model', `${clean(r.provider)}/${clean(r.model)}`),
          el('td', 'n', num(r.requests)),
          el('td', 'n', num(r.input_tokens)),
          el('td', 'n', num(r.output_tokens)),
          el('td', 'n', num(r.cached_tokens)),
          el('td', 'n', (r.cost_usd || 0).toFixed(4)),
        ),
      );
    }
    table.append(body);
    const rate = this.lastRate
      ? `last: ${this.lastRate.rate.toFixed(1)} tok/s (${this.lastRate.model}${this.lastRate.endpoint ? ` @ ${this.lastRate.endpoint}` : ''}${typeof this.lastRate.latency === 'number' ? `, ${num(this.lastRate.latency)} ms` : ''})`
      : 'no request yet';
    fill(this.stats, el('p', 'pane-note', `today: $${this.totalCost.toFixed(4)}`), el('p', 'pane-note', rate));
    if (this.statRows.length) this.stats.append(el('div', 'table-wrap', table));
  }

  // ---- cron ----

  cronAnswer(reply) {
    const jobs = Array.isArray(reply.jobs) ? reply.jobs : [];
    fill(this.cron);
    if (!jobs.length) this.cron.append(el('li', 'empty', 'no cron jobs'));
    for (const job of jobs) {
      const next = job.next_run ? `${until(job.next_run)} · ${new Date(Date.parse(job.next_run)).toLocaleString()}` : 'no next run';
      this.cron.append(
        el(
          'li',
          'cron-job',
          el('div', 'cron-head', el('span', 'cron-id', clean(job.id)), el('span', 'cron-schedule', clean(job.schedule))),
          el('div', 'cron-next', `next: ${next}`),
          el('div', 'cron-describe', oneLine(job.describe || job.prompt, 160)),
        ),
      );
    }
  }

  cronFailed(message) {
    fill(this.cron, el('li', 'error', clean(message)));
  }

  // ---- MCP and health ----

  setStatus(frame) {
    this.status = frame;
    fill(this.mcp);
    const servers = Array.isArray(frame.mcp) ? frame.mcp : [];
    if (!servers.length) this.mcp.append(el('li', 'empty', 'no MCP servers'));
    for (const s of servers) {
      const tools = Array.isArray(s.tools) ? s.tools : [];
      this.mcp.append(
        el(
          'li',
          `mcp-server mcp-${['ready', 'failed', 'starting'].includes(s.state) ? s.state : 'other'}`,
          el('div', 'mcp-head', el('span', 'mcp-name', clean(s.name)), el('span', 'mcp-transport', clean(s.transport)), el('span', `state mcp-state`, clean(s.state))),
          el('div', 'mcp-tools', tools.length ? `${tools.length} tools: ${tools.map(clean).join(', ')}` : 'no tools'),
          s.last_error && el('div', 'error', clean(s.last_error)),
        ),
      );
    }
    this.renderHealth();
  }

  setHello(hello) {
    this.hello = hello;
    this.renderHealth();
  }

  setConnection(text) {
    this.connection = text;
    this.renderHealth();
  }

  renderHealth() {
    const h = this.hello || {};
    const s = this.status || {};
    const bot = (b) => (b && typeof b === 'object' ? `${clean(b.state)}${b.detail ? ` · ${clean(b.detail)}` : ''}` : 'off');
    const local = s.local && typeof s.local === 'object' ? `${num(s.local.up)}/${num(s.local.total)} up` : 'not probed yet';
    const rows = [
      ['connection', this.connection],
      ['server', h.server ? `${clean(h.server)} · ${clean(h.mode)} pid ${clean(h.pid)}` : '–'],
      ['model', clean(h.model) || '–'],
      ['context', h.context_length ? `${num(h.context_length)} tokens` : '–'],
      ['local endpoints', local],
      ['discord', bot(s.discord)],
      ['telegram', bot(s.telegram)],
      ['mcp', Array.isArray(s.mcp) ? `${s.mcp.filter((m) => m.state === 'ready').length}/${s.mcp.length} ready` : '–'],
      ['workspace', clean(h.workspace) || '–'],
      ['notifications', notificationState()],
    ];
    const dl = el('dl', 'health');
    for (const [k, v] of rows) {
      const dd = el('dd', null, v);
      dd.dataset.key = k;
      dl.append(el('dt', null, k), dd);
    }
    const actions = el('div', 'pane-actions');
    if (notificationState() === 'default') {
      const b = button('', 'enable notifications', async () => {
        await askPermission();
        this.renderHealth();
      });
      b.id = 'notify-enable';
      actions.append(b);
    }
    const out = button('danger', 'sign out', () => this.app.signOut());
    out.id = 'signout';
    actions.append(out);
    fill(this.health, dl, actions);
  }
}
