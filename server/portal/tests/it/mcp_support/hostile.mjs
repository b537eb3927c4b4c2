// An MCP server written for the tests, speaking JSON-RPC lines on stdio without any SDK, that
// misbehaves as its first argument says:
//   polite    answers like a server should (`big` with 300,000 characters, `fail` with
//             isError, `grow` adds the tool `grown` and says its tools changed); `wait` sleeps
//             until cancelled, writing each notifications/cancelled it
//             receives to the file named by CANCEL_LOG
//   hang      answers initialize, then never answers anything else
//   flood     answers `flood` with a 100 MB text
//   tools     lists 5000 tools, one of them with a 1 MB description
//   die       exits in the middle of a call to `die`
//   malformed answers `garbage` with a line that is not JSON-RPC, then no answer
//   silent    never answers initialize
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "polite";
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const result = (id, value) => send({ jsonrpc: "2.0", id, result: value });
const text = (t) => ({ content: [{ type: "text", text: t }] });
const schema = { type: "object", properties: {} };
let grown = false;

function tools() {
  const base = [
    { name: "wait", description: "Waits until cancelled.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "flood", description: "Answers with 100 MB.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "die", description: "Dies mid-call.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "garbage", description: "Answers with a broken line.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "env", description: "Lists its environment's names.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "erase", description: "Erases everything (it says).", inputSchema: schema },
    { name: "big", description: "Answers with 300,000 characters.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "fail", description: "Answers with isError.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
    { name: "grow", description: "Adds a tool.", inputSchema: schema,
      annotations: { readOnlyHint: true } },
  ];
  if (grown) {
    base.push({ name: "grown", description: "Grown on request.", inputSchema: schema,
      annotations: { readOnlyHint: true } });
  }
  if (mode !== "tools") return base;
  const many = Array.from({ length: 5000 }, (_, i) => ({
    name: `tool-${i}`,
    description: i === 0 ? "x".repeat(1024 * 1024) : `Tool number ${i}.`,
    inputSchema: schema,
    annotations: { readOnlyHint: true },
  }));
  return [...base, ...many];
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.method === "notifications/cancelled") {
    if (process.env.CANCEL_LOG) {
      appendFileSync(process.env.CANCEL_LOG, JSON.stringify(message.params) + "\n");
    }
    return;
  }
  if (message.id === undefined) return;
  switch (message.method) {
    case "initialize":
      if (mode === "silent") return;
      return result(message.id, {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "hostile", version: "1.0.0" },
      });
    case "tools/list":
      return result(message.id, { tools: tools() });
    case "tools/call":
      if (mode === "hang") return;
      return call(message.id, message.params.name);
    default:
      return send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no" } });
  }
});

function call(id, name) {
  switch (name) {
    case "wait":
      return;
    case "flood": {
      const chunk = "y".repeat(1024 * 1024);
      process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
      for (let i = 0; i < 100; i++) process.stdout.write(chunk);
      return process.stdout.write(`"}]}}\n`);
    }
    case "die":
      process.stderr.write("hostile: dying in the middle of a call\n");
      return process.exit(3);
    case "garbage":
      return process.stdout.write("this is { not json-rpc\n");
    case "env":
      return result(id, text(Object.keys(process.env).sort().join(",")));
    case "erase":
      return result(id, text("Erased nothing: this is a test."));
    case "big":
      return result(id, text("z".repeat(300000)));
    case "grow":
      grown = true;
      result(id, text("Grown."));
      return send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    case "grown":
      return result(id, text("I am new."));
    case "fail":
      return result(id, { ...text("The heron flew away."), isError: true });
    default:
      return result(id, { ...text(`no tool ${name}`), isError: true });
  }
}
