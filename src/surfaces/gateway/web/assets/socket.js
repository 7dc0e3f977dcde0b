// The WebSocket to the gateway (docs/protocol.md): hello without a token
// (the HttpOnly cookie admitted the upgrade), events applied once by
// `seq`, reconnect with backoff and `resume_after`, queries answered by
// id.

const QUERY_TIMEOUT_MS = 15_000;

export class Link {
  /**
   * handlers: hello(frame, {fresh}), event(seq, event, {replayed}),
   * status(frame), resync(frame), rejected(frame), state(name, detail),
   * signedOut(message)
   */
  constructor(handlers) {
    this.h = handlers;
    this.ws = null;
    this.lastSeq = null;
    this.instance = null;
    this.helloed = false;
    this.backoff = 250;
    this.timer = null;
    this.nextId = 1;
    this.pending = new Map();
    this.stopped = false;
    // Approval requests re-sent after hello/resync carry old numbers.
    this.acceptOldApprovals = false;
  }

  connect() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    let ws;
    try {
      ws = new WebSocket(`${scheme}//${location.host}/ws`);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    this.helloed = false;
    ws.addEventListener('open', () => {
      const hello = { frame: 'hello', version: 1, client: 'egirl-web' };
      if (this.lastSeq !== null && this.instance !== null) hello.resume_after = this.lastSeq;
      ws.send(JSON.stringify(hello));
    });
    ws.addEventListener('message', (m) => {
      if (ws !== this.ws) return;
      let frame;
      try {
        frame = JSON.parse(m.data);
      } catch {
        return;
      }
      if (frame && typeof frame === 'object') this.onFrame(frame);
    });
    ws.addEventListener('close', () => {
      if (ws !== this.ws) return;
      const admitted = this.helloed;
      this.ws = null;
      this.failPending('disconnected');
      if (this.stopped) return;
      this.failures = admitted ? 0 : (this.failures || 0) + 1;
      // Refused before hello twice: maybe this browser was signed out (the
      // upgrade answers 401 and a socket cannot say why); the page tells.
      if (this.failures >= 2) this.checkSignedIn();
      this.retry();
    });
    ws.addEventListener('error', () => {
      /* close follows */
    });
  }

  retry() {
    this.h.state('reconnecting');
    clearTimeout(this.timer);
    const wait = this.backoff + Math.random() * this.backoff * 0.3;
    this.backoff = Math.min(this.backoff * 2, 5000);
    this.timer = setTimeout(() => this.connect(), wait);
  }

  /** Closes this socket and opens a fresh one now (a view to rebuild). */
  restart(fresh) {
    if (fresh) {
      this.lastSeq = null;
      this.instance = null;
    }
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
    this.failPending('reconnecting');
    this.connect();
  }

  onFrame(frame) {
    switch (frame.frame) {
      case 'hello':
        return this.onHello(frame);
      case 'event':
        return this.onEvent(frame);
      case 'status':
        return this.h.status(frame);
      case 'answer':
        return this.onAnswer(frame);
      case 'resync':
        this.lastSeq = typeof frame.seq === 'number' ? frame.seq : this.lastSeq;
        this.acceptOldApprovals = true;
        return this.h.resync(frame);
      case 'rejected': {
        // A query this server does not know is refused like an op.
        const waiter = this.pending.get(frame.id);
        if (waiter) {
          this.pending.delete(frame.id);
          waiter.resolve({ kind: 'failed', message: typeof frame.message === 'string' ? frame.message : 'refused' });
          return undefined;
        }
        return this.h.rejected(frame);
      }
      case 'error':
        return this.onError(frame);
      default:
        return undefined;
    }
  }

  onHello(frame) {
    const instance = typeof frame.instance === 'string' && frame.instance ? frame.instance : `pid:${frame.pid}`;
    if (this.instance !== null && instance !== this.instance) {
      // Another run of the daemon: its numbers are not ours to resume from.
      this.restart(true);
      return;
    }
    const fresh = this.lastSeq === null;
    if (fresh) this.lastSeq = typeof frame.seq === 'number' ? frame.seq : 0;
    this.instance = instance;
    this.helloed = true;
    this.backoff = 250;
    this.acceptOldApprovals = true;
    this.h.state('connected');
    this.h.hello(frame, { fresh });
  }

  onEvent(frame) {
    const seq = frame.seq;
    const event = frame.event;
    if (!event || typeof event !== 'object' || typeof seq !== 'number') return;
    const old = this.lastSeq !== null && seq <= this.lastSeq;
    if (old) {
      // Open approvals re-sent after hello or resync keep their numbers.
      if (event.type === 'approval_request' && this.acceptOldApprovals) {
        this.h.event(seq, event, { replayed: true });
      }
      return;
    }
    this.acceptOldApprovals = false;
    this.lastSeq = seq;
    this.h.event(seq, event, { replayed: false });
  }

  onAnswer(frame) {
    const waiter = this.pending.get(frame.id);
    if (!waiter) return;
    this.pending.delete(frame.id);
    waiter.resolve(frame.reply && typeof frame.reply === 'object' ? frame.reply : { kind: 'failed', message: 'empty answer' });
  }

  onError(frame) {
    const message = typeof frame.message === 'string' ? frame.message : 'refused';
    if (/admitted|token|paired|sign|unauthori[sz]ed|not allowed/i.test(message)) {
      this.stopped = true;
      clearTimeout(this.timer);
      if (this.ws) this.ws.close();
      this.h.signedOut(message);
      return;
    }
    this.h.notice(`server: ${message}`);
  }

  async checkSignedIn() {
    try {
      const res = await fetch('/', { cache: 'no-store', credentials: 'same-origin' });
      const page = await res.text();
      if (res.ok && page.includes('id="signin"')) {
        this.stopped = true;
        clearTimeout(this.timer);
        this.h.signedOut('this browser is no longer signed in');
      }
    } catch {
      /* the daemon is down: keep retrying */
    }
  }

  failPending(why) {
    for (const [, waiter] of this.pending) waiter.resolve({ kind: 'failed', message: why });
    this.pending.clear();
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.helloed;
  }

  send(frame) {
    if (!this.connected) return false;
    try {
      this.ws.send(JSON.stringify(frame));
      return true;
    } catch {
      return false;
    }
  }

  /** A query; resolves with the answer's reply (or `failed`). */
  query(ask) {
    const id = `q${this.nextId++}`;
    return new Promise((resolve) => {
      if (!this.send({ frame: 'query', id, ask })) {
        resolve({ kind: 'failed', message: 'not connected' });
        return;
      }
      // An answer that never comes (an older daemon) must not hang the view.
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) resolve({ kind: 'failed', message: 'no answer' });
      }, QUERY_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
      });
    });
  }

  newId(prefix = 'w') {
    const rand = Math.random().toString(36).slice(2, 8);
    return `${prefix}-${Date.now().toString(36)}-${rand}-${this.nextId++}`;
  }

  /**
   * An op, sent now or not at all: a message typed while disconnected
   * stays in the box (the caller says so), never sent later unseen.
   */
  op(op) {
    const id = this.newId(op.type === 'user_message' ? 's' : 'o');
    return { id, sent: this.send({ frame: 'op', id, op }) };
  }
}
