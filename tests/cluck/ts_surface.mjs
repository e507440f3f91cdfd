// The farm's MCP surface through the TypeScript SDK, driven by
// tests/cluck/test_mcp_surface_e2e.py: prints one JSON line with what it saw.
// 1.x (@modelcontextprotocol/sdk, 2025-11-25): resources, templates, the prompt, completions,
// progress, submit without a question, the report as a core task.
// 2.x (@modelcontextprotocol/client, 2026-07-28): the confirmation before submit, answered by
// the client's elicitation handler (the SDK fulfils the InputRequiredResult and echoes the
// request state), and a resource and the prompt in that era.
import { readFileSync } from "node:fs";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const env = process.env;
// Next to the script: its node_modules (the SDK's exports map hides its own package.json).
const manifest = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
const sdk = JSON.parse(readFileSync(manifest, "utf8")).version;

const transport = new StreamableHTTPClientTransport(new URL(env.MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${env.MCP_BEARER}` } },
});
const client = new Client({ name: "cluck-ts-e2e", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);

const report = { fromDate: env.FROM_DATE, toDate: env.TO_DATE };
const resources = await client.listResources();
const templates = await client.listResourceTemplates();
const card = await client.readResource({ uri: `farm://flocks/${env.FLOCK_ID}` });
const prompt = await client.getPrompt({
  name: "cluck_summarise_day",
  arguments: { flock: "House 1 White" },
});
const completions = await client.complete({
  ref: { type: "ref/prompt", name: "cluck_summarise_day" },
  argument: { name: "flock", value: "house 1" },
});
await client.listTools(); // caches which tools support tasks (execution.taskSupport)

const submitted = await client.callTool({
  name: "cluck_submit_daily_entry",
  arguments: { idempotencyKey: "ts-e2e-submit", dailyEntryId: Number(env.DRAFT_ID) },
});
const progress = [];
const sync = await client.callTool(
  { name: "cluck_production_report", arguments: report },
  CallToolResultSchema,
  { onprogress: (p) => progress.push(p) },
);

const taskStatuses = [];
let taskReport = null;
for await (const message of client.experimental.tasks.callToolStream(
  { name: "cluck_production_report", arguments: report },
  CallToolResultSchema,
  { task: { ttl: 60000 } },
)) {
  if (message.type === "taskCreated" || message.type === "taskStatus") {
    taskStatuses.push(message.task.status);
  } else if (message.type === "result") {
    taskReport = message.result.structuredContent;
  } else if (message.type === "error") {
    throw message.error;
  }
}
await client.close();

// --- 2026-07-28 through the 2.x client ----------------------------------------------------
const asked = [];
const modern = new ModernClient(
  { name: "cluck-ts-e2e-modern", version: "1.0.0" },
  { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
modern.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { confirm: true } };
});
await modern.connect(
  new ModernTransport(new URL(env.MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${env.MCP_BEARER}` } },
  }),
);
const modernGrades = await modern.readResource({ uri: "farm://grades" });
const modernPrompt = await modern.getPrompt({ name: "cluck_summarise_day", arguments: {} });
const confirmed = await modern.callTool({
  name: "cluck_submit_daily_entry",
  arguments: { idempotencyKey: "ts-e2e-confirmed", dailyEntryId: Number(env.MODERN_DRAFT_ID) },
});
const modernVersion = modern.getNegotiatedProtocolVersion();
await modern.close();

console.log(
  JSON.stringify({
    sdk,
    protocolVersion: transport.protocolVersion,
    resources: resources.resources.map((r) => r.uri),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate),
    card: card.contents[0].text,
    promptKinds: prompt.messages.map((m) => m.content.type),
    completions: completions.completion.values,
    progress,
    syncReport: sync.structuredContent,
    submitted: submitted.structuredContent,
    taskStatuses,
    taskReport,
    modern: {
      protocolVersion: modernVersion,
      grades: JSON.parse(modernGrades.contents[0].text).grades.map((g) => g.name),
      promptKinds: modernPrompt.messages.map((m) => m.content.type),
      asked,
      confirmed: confirmed.structuredContent,
    },
  }),
);
