// The TypeScript SDK v1 client (@modelcontextprotocol/sdk, 2025-11-25 tasks)
// running tasks on one of our servers over stdio (tests/interop/test_ts_tasks.py).
//
//   node tasks_client.mjs PYTHON SERVER_FILE
//
// Prints one JSON line per step: the tools' taskSupport, each task-augmented
// call's stream of message types and its final text, the related-task tag of
// the elicitation the task asked, and a cancelled task's status.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [python, serverFile] = process.argv.slice(2);
const out = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const client = new Client(
  { name: "ts-tasks", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, defaultTaskPollInterval: 50 },
);
let elicitMeta = null;
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitMeta = request.params._meta ?? null;
  return { action: "accept", content: { approve: true } };
});
const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "mcp_adapters", "run", serverFile],
  stderr: "inherit",
});
await client.connect(transport);

const { tools } = await client.listTools();
out({ step: "tools", support: Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null])) });

async function run(name, args) {
  const types = [];
  let text = null;
  let error = null;
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    undefined,
    { task: { ttl: 60000 } },
  )) {
    types.push(message.type);
    if (message.type === "result") text = message.result.content[0].text;
    if (message.type === "error") error = String(message.error);
  }
  return { types: [...new Set(types)], text, error };
}

out({ step: "render", ...(await run("render", { frames: 3 })) });
out({ step: "approve", ...(await run("approve", { item: "invoice 7" })), elicitMeta });

// A task cancelled while it runs: create it, cancel it, read its status.
const stream = client.experimental.tasks.callToolStream(
  { name: "wait_forever", arguments: {} },
  undefined,
  { task: { ttl: 60000 } },
);
const first = await stream.next();
const taskId = first.value.task.taskId;
const cancelled = await client.experimental.tasks.cancelTask(taskId);
const after = await client.experimental.tasks.getTask(taskId);
const listed = await client.experimental.tasks.listTasks();
out({
  step: "cancel",
  cancelled: cancelled.status,
  after: after.status,
  listed: listed.tasks.length,
});
await client.close();
