// Drives @a2a-js/sdk's client against a Cluck A2A endpoint for tests/a2a_tools/test_e2e.py.
// Input (argv[2], JSON): {"base": "http://host:port", "bearer": "...", "calls": [...]}, where a
// call is {"op": "card"} | {"op": "extendedCard"} (Client.getAgentCard: the extended card,
// since the public one declares it) | {"op": "getTask", "id"} |
// {"op": "send", "skill", "arguments"?, "key"?}. Output (stdout, JSON): one entry per call,
// {"ok": <result>} or {"error": {"name", "message", "code"?}}. Errors never stop the run.
import { randomUUID } from "node:crypto";
import { Role, taskStateToJSON } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

const { base, bearer, calls } = JSON.parse(process.argv[2]);
const authedFetch = (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set("Authorization", `Bearer ${bearer}`);
  return fetch(input, { ...init, headers });
};

const publicCard = await new DefaultAgentCardResolver({ fetchImpl: fetch }).resolve(base);
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authedFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authedFetch }),
  }),
);
const client = await factory.createFromUrl(base);

// The SDK's objects hold enums as numbers; name task states as the wire does.
function withStateNames(result) {
  const task = result?.status ? result : result?.payload?.value ?? result;
  if (task?.status) task.status.stateName = taskStateToJSON(task.status.state);
  return result;
}

async function run(call) {
  switch (call.op) {
    case "card":
      return publicCard;
    case "extendedCard":
      return client.getAgentCard();
    case "getTask":
      return withStateNames(await client.getTask({ id: call.id }));
    case "send": {
      const data = { skill: call.skill };
      if (call.arguments !== undefined) data.arguments = call.arguments;
      const message = {
        messageId: randomUUID(),
        role: Role.ROLE_USER,
        parts: [{ content: { $case: "data", value: data }, mediaType: "application/json" }],
      };
      if (call.key !== undefined) message.metadata = { idempotencyKey: call.key };
      return withStateNames(await client.sendMessage({ message }));
    }
    default:
      throw new Error(`unknown op ${call.op}`);
  }
}

const results = [];
for (const call of calls) {
  try {
    results.push({ ok: await run(call) });
  } catch (error) {
    results.push({
      error: {
        name: error?.name,
        message: String(error?.message ?? error),
        code: error?.envelopeCode ?? error?.code,
      },
    });
  }
}
process.stdout.write(JSON.stringify(results, (_, v) => (typeof v === "bigint" ? Number(v) : v)));
