// A real ACP client for the `egirl acp` tests: the npm SDK's client side
// (@agentclientprotocol/sdk, installed by scripts/install-acp.sh), driving
// the agent it spawns through a scripted scenario.
//
// Usage: node client.mjs SCENARIO.json
//   env ACP_NODE_MODULES: where the SDK is installed.
// The scenario: {"command": ..., "args": [...], "cwd": ..., "env": {...},
//   "answers": ["allow_once", ...]    (picks for session/request_permission, in order)
//   "buffers": {PATH: TEXT}           (given: the client offers fs/read_text_file and
//                                      fs/write_text_file, served from these buffers)
//   "steps": [{"do": "initialize"} | {"do": "new", "cwd": ..., "mcp": [MCP_SERVER, ...]?} |
//             {"do": "prompt", "text": ..., "image": BASE64_PNG?, "cancel_on": "agent_message_chunk"} |
//             {"do": "load", "session": ID | "$new", "mcp": [...]?} | {"do": "list"} |
//             {"do": "set_model", "value": ...}]}
// Prints one JSON report on stdout: each step's response or error and the
// updates that came during it, the permission requests, and every line
// the agent wrote on its stdout, raw.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const sdkPath = join(process.env.ACP_NODE_MODULES, "@agentclientprotocol/sdk/dist/v1/stable/acp.js");
const { client, ndJsonStream, methods } = await import(pathToFileURL(sdkPath).href);

const child = spawn(scenario.command, scenario.args, {
  cwd: scenario.cwd,
  env: { ...process.env, ...(scenario.env ?? {}) },
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (d) => { stderr += d.toString(); });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));

// Every byte of the agent's stdout, to check it holds nothing but frames.
const [toSdk, toCheck] = Readable.toWeb(child.stdout).tee();
let raw = "";
const rawDone = (async () => {
  const decoder = new TextDecoder();
  for await (const chunk of toCheck) raw += decoder.decode(chunk, { stream: true });
})();

const answers = [...(scenario.answers ?? [])];
const buffers = scenario.buffers ?? null;
const fsCalls = [];
const permissions = [];
const updates = [];
let connection = null;
let cancelOn = null;
let sessionId = null;

const app = client({ name: "egirl-acp-test" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    permissions.push(params);
    const pick = answers.shift() ?? "reject_once";
    return { outcome: { outcome: "selected", optionId: pick } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    fsCalls.push({ method: "read", path: params.path });
    if (!(params.path in buffers)) throw new Error(`no such file: ${params.path}`);
    return { content: buffers[params.path] };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    fsCalls.push({ method: "write", path: params.path });
    buffers[params.path] = params.content;
    return {};
  })
  .onNotification(methods.client.session.update, async ({ params }) => {
    updates.push(params);
    if (cancelOn && params.update.sessionUpdate === cancelOn) {
      cancelOn = null;
      await connection.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
    }
  });

async function step(ctx, s) {
  switch (s.do) {
    case "initialize":
      return ctx.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: !!buffers, writeTextFile: !!buffers }, terminal: false },
        clientInfo: { name: "egirl-acp-test", version: "1" },
      });
    case "new": {
      const response = await ctx.request(methods.agent.session.new, { cwd: s.cwd, mcpServers: s.mcp ?? [] });
      sessionId = response.sessionId;
      return response;
    }
    case "prompt":
      cancelOn = s.cancel_on ?? null;
      return ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: "text", text: s.text },
          ...(s.image ? [{ type: "image", data: s.image, mimeType: "image/png" }] : []),
        ],
      });
    case "load": {
      const id = s.session === "$new" ? sessionId : s.session;
      const response = await ctx.request(methods.agent.session.load, { sessionId: id, cwd: s.cwd, mcpServers: s.mcp ?? [] });
      sessionId = id;
      return response;
    }
    case "list":
      return ctx.request(methods.agent.session.list, {});
    case "set_model":
      return ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: s.value });
    default:
      throw new Error(`unknown step ${s.do}`);
  }
}

const results = [];
const stream = ndJsonStream(Writable.toWeb(child.stdin), toSdk);
await app.connectWith(stream, async (ctx) => {
  connection = ctx;
  for (const s of scenario.steps) {
    const from = updates.length;
    let outcome;
    try {
      outcome = { response: await step(ctx, s) };
    } catch (e) {
      outcome = { error: { code: e.code ?? null, message: e.message ?? String(e) } };
    }
    // Notifications sent just before a response may still be in flight.
    await new Promise((r) => setTimeout(r, 50));
    results.push({ step: s.do, ...outcome, updates: updates.slice(from), session: sessionId });
  }
});
child.stdin.end();
const exit = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 15000))]);
if (exit === null) child.kill("SIGKILL");
await Promise.race([rawDone, new Promise((r) => setTimeout(r, 2000))]);
process.stdout.write(JSON.stringify({ results, permissions, buffers, fs: fsCalls, raw, stderr: stderr.slice(-4000), exit }) + "\n");
process.exit(0);
