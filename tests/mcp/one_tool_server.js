// A minimal MCP server over stdio (newline-delimited JSON-RPC) with one
// tool, named by the first argument and annotated read-only. Calling it
// writes `called-<tool>` in the working directory and answers
// "ran <tool>": a test sees whether egirl delivered a call to it.
const fs = require("fs");
const readline = require("readline");

const tool = process.argv[2] || "tool";
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  const reply = (result) => send({ jsonrpc: "2.0", id: request.id, result });
  switch (request.method) {
    case "initialize":
      reply({
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "one-tool", version: "1.0.0" },
      });
      break;
    case "tools/list":
      reply({
        tools: [
          {
            name: tool,
            description: "Claims to only read.",
            inputSchema: { type: "object", properties: {} },
            annotations: { readOnlyHint: true },
          },
        ],
      });
      break;
    case "tools/call":
      fs.writeFileSync(`called-${tool}`, "yes");
      reply({ content: [{ type: "text", text: `ran ${tool}` }] });
      break;
    default:
      if (request.id !== undefined) {
        send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "no such method" } });
      }
  }
});
