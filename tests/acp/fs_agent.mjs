#!/usr/bin/env node
// A small ACP agent written against the SDK's agent side (`agent()`), for
// the `delegate` tests of what Claude Code's adapter never sends (it writes
// the disk itself): fs/write_text_file and fs/read_text_file requests, and
// an agent that ignores session/cancel while its child process runs.
//
// argv[2]: the SDK's dist/v1/stable/acp.js (the one scripts/install-acp.sh
// installs, as tests/acp/client.mjs uses). The prompt's text is a JSON script:
//   {"ask": title, "writes": [[path, content], ...], "read": path, "hang": seconds,
//    "disk_writes": [[path, content], ...], "disk_reads": [path, ...]}
// "disk_*" go to the disk directly, not through the client (the sandbox's bounds).
// With "ask", the writes are made only when the client picks "allow".
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const { agent, methods, ndJsonStream, PROTOCOL_VERSION } = await import(pathToFileURL(process.argv[2]).href);

// One client per process: what its `initialize` and `session/new` said.
const state = { fs: {}, terminal: null, cwd: null };

function say(client, sessionId, text) {
  return client.notify(methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

class ScriptedTurn {
  constructor(client) {
    this.client = client;
    this.fs = state.fs;
    this.terminal = state.terminal;
    this.cwd = state.cwd;
  }
  say(sessionId, text) {
    return say(this.client, sessionId, text);
  }
  async run(params) {
    const sessionId = params.sessionId;
    const script = JSON.parse(params.prompt.map((p) => p.text ?? "").join(""));
    await this.say(sessionId, `cwd ${this.cwd}; fs ${JSON.stringify(this.fs)}; terminal ${JSON.stringify(this.terminal)}\n`);
    if (script.ask) {
      const { outcome } = await this.client.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "ask1", title: script.ask, kind: "edit", status: "pending", rawInput: { writes: script.writes } },
        options: [
          { kind: "allow_once", name: "Allow", optionId: "allow" },
          { kind: "allow_always", name: "Always allow", optionId: "always" },
          { kind: "reject_once", name: "Reject", optionId: "reject" },
        ],
      });
      const chosen = outcome.outcome === "selected" ? outcome.optionId : outcome.outcome;
      await this.say(sessionId, `permission: ${chosen}\n`);
      if (chosen !== "allow") {
        await this.say(sessionId, "nothing written");
        return { stopReason: "end_turn" };
      }
    }
    for (const [path, content] of script.writes ?? []) {
      try {
        await this.client.request(methods.client.fs.writeTextFile, { sessionId, path, content });
        await this.say(sessionId, `wrote ${path}\n`);
      } catch (e) {
        await this.say(sessionId, `refused ${path}: ${e.message ?? JSON.stringify(e)}\n`);
      }
    }
    if (script.read) {
      try {
        const { content } = await this.client.request(methods.client.fs.readTextFile, { sessionId, path: script.read });
        await this.say(sessionId, `read ${script.read}: ${content.trim()}\n`);
      } catch (e) {
        await this.say(sessionId, `refused ${script.read}: ${e.message ?? JSON.stringify(e)}\n`);
      }
    }
    for (const [path, content] of script.disk_writes ?? []) {
      try {
        fs.writeFileSync(path, content);
        await this.say(sessionId, `disk wrote ${path}\n`);
      } catch (e) {
        await this.say(sessionId, `disk refused ${path}: ${e.code}\n`);
      }
    }
    for (const path of script.disk_reads ?? []) {
      try {
        await this.say(sessionId, `disk read ${path}: [${fs.readFileSync(path, "utf8").trim()}]\n`);
      } catch (e) {
        await this.say(sessionId, `disk refused ${path}: ${e.code}\n`);
      }
    }
    await this.say(sessionId, `env ${Object.keys(process.env).sort().join(",")}\n`);
    if (script.hang) {
      const child = spawn("sleep", [String(script.hang)], { stdio: "ignore" });
      await this.client.notify(methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "tool_call", toolCallId: "t1", title: `sleep ${script.hang} (pid ${child.pid})`, status: "in_progress" },
      });
      await new Promise(() => {});
    }
    await this.say(sessionId, "all done");
    return { stopReason: "end_turn" };
  }
}

const app = agent({ name: "fs-agent" })
  .onRequest(methods.agent.initialize, ({ params }) => {
    state.fs = params.clientCapabilities?.fs ?? {};
    state.terminal = params.clientCapabilities?.terminal ?? null;
    return { protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: false } };
  })
  .onRequest(methods.agent.authenticate, () => ({}))
  .onRequest(methods.agent.session.new, ({ params }) => {
    state.cwd = params.cwd;
    return { sessionId: "fs-agent-session" };
  })
  .onRequest(methods.agent.session.prompt, ({ params, client }) => new ScriptedTurn(client).run(params))
  // Ignored on purpose: egirl must still end it.
  .onNotification(methods.agent.session.cancel, () => {});

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
