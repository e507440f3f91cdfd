// Drives /mcp with the official TypeScript MCP SDK, as Claude Code and the Inspector do.
//
// Reads a plan from stdin and prints one JSON report on stdout:
//   plan   {"url": "...", "sessions": [{"name", "bearer", "era", "steps": [step, ...],
//           "elicitation": [answer, ...]}]}  (optional, handshake era: declare elicitation and
//           answer each elicitation/create with the next answer, {"action": "cancel"} after)
//   step   {"op": "list"} | {"op": "call", "name": "<tool>", "arguments": {...}}
//   report {"sessions": [{"name", "era", "protocolVersion", "steps": [outcome, ...],
//           "elicitations": [params of each elicitation/create received]}]}
//   outcome {"result": <what the client returned to its caller>}
//         | {"thrown": {"name", "code", "message", "data"}}  (the client threw instead)
//
// era "2025-11-25" (handshake) uses @modelcontextprotocol/sdk 1.x, the line Claude Code and
// mcp-remote ship. Its Client.callTool validates structuredContent against the tool's
// outputSchema (learned from listTools) even when isError is true, so a step list must list
// before it calls. era "2026-07-28" uses @modelcontextprotocol/client 2.x (1.x cannot speak it),
// pinned to that revision: no initialize, server/discover and a per-request _meta envelope.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const CLIENT_INFO = { name: "cluck-tests", version: "0.1.0" };

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function connectOptions(session) {
  return { requestInit: { headers: { Authorization: `Bearer ${session.bearer}` } } };
}

async function open(url, session, elicitations) {
  if (session.era === "2026-07-28") {
    const client = new ModernClient(CLIENT_INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new ModernTransport(new URL(url), connectOptions(session)));
    return { client, protocolVersion: client.getNegotiatedProtocolVersion() };
  }
  if (session.era !== "2025-11-25") throw new Error(`unknown era ${session.era}`);
  const answers = session.elicitation ? [...session.elicitation] : null;
  const client = new Client(CLIENT_INFO, answers ? { capabilities: { elicitation: {} } } : {});
  if (answers) {
    // As a host does: the server asks on the tools/call stream, the answer is POSTed back.
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params);
      return answers.shift() ?? { action: "cancel" };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), connectOptions(session));
  await client.connect(transport);
  return { client, protocolVersion: transport.protocolVersion };
}

async function run(client, step) {
  try {
    if (step.op === "list") return { result: await client.listTools() };
    if (step.op === "call") {
      return { result: await client.callTool({ name: step.name, arguments: step.arguments ?? {} }) };
    }
    throw new Error(`unknown op ${step.op}`);
  } catch (error) {
    return {
      thrown: {
        name: error?.constructor?.name ?? typeof error,
        code: error?.code ?? null,
        message: String(error?.message ?? error),
        data: error?.data ?? null,
      },
    };
  }
}

const plan = await readStdin();
const report = { sessions: [] };
for (const session of plan.sessions) {
  const elicitations = [];
  const { client, protocolVersion } = await open(plan.url, session, elicitations);
  const steps = [];
  for (const step of session.steps) steps.push(await run(client, step));
  await client.close();
  report.sessions.push({ name: session.name, era: session.era, protocolVersion, steps, elicitations });
}
process.stdout.write(JSON.stringify(report) + "\n");
