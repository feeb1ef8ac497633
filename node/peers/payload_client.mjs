// A TypeScript SDK client (v1: @modelcontextprotocol/sdk, v2: @modelcontextprotocol/client)
// running the large-payload scenario of tests/interop/test_large_payloads_sdk.py.
//
//   node payload_client.mjs SPEC.json
//
// SPEC: {"sdk": "v1"|"v2", "mode": "legacy"|"auto" (v2), "transport": "stdio"|"http",
//        "url": ..., "command": ..., "args": [...], "cwd": ..., "maxBufferSize": N (stdio),
//        "calls": [{"tool": ..., "arguments": {...}, "data_file": PATH?}, ...]}
// `data_file` holds a base64 file that becomes `arguments.data` (too big for argv).
// Every call's outcome is one JSON line on stdout: the result in digested form
// (text items, and each image's size, SHA-256 and type), or the error's code and
// message. Calls go on after an error: the test checks the peer still answers.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const TIMEOUT = 300_000; // generous: a loaded machine moves 100 MB slowly, never forever

async function load() {
  if (spec.sdk === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, options: {} };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  return {
    Client,
    StdioClientTransport,
    StreamableHTTPClientTransport,
    options: spec.mode ? { mode: spec.mode } : {},
  };
}

function digest(result) {
  return result.content.map((item) =>
    item.type === "image"
      ? {
          type: "image",
          mimeType: item.mimeType,
          bytes: Buffer.from(item.data, "base64").length,
          sha256: createHash("sha256").update(Buffer.from(item.data, "base64")).digest("hex"),
        }
      : item,
  );
}

const { Client, StdioClientTransport, StreamableHTTPClientTransport, options } = await load();
const transport =
  spec.transport === "stdio"
    ? new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd,
        env: process.env,
        stderr: "inherit",
        // Both SDKs' stdio clients refuse a message over 10 MiB unless told otherwise.
        ...(spec.maxBufferSize ? { maxBufferSize: spec.maxBufferSize } : {}),
      })
    : new StreamableHTTPClientTransport(new URL(spec.url));
const client = new Client({ name: `payload-${spec.sdk}`, version: "1.0.0" }, options);
await client.connect(transport, { timeout: TIMEOUT });
for (const call of spec.calls) {
  const args = { ...call.arguments };
  if (call.data_file) args.data = readFileSync(call.data_file, "ascii");
  const started = Date.now();
  try {
    const params = { name: call.tool, arguments: args };
    const result =
      spec.sdk === "v1"
        ? await client.callTool(params, undefined, { timeout: TIMEOUT })
        : await client.callTool(params, { timeout: TIMEOUT });
    const outcome = { tool: call.tool, ok: true, content: digest(result), ms: Date.now() - started };
    console.log(JSON.stringify(outcome));
  } catch (error) {
    const outcome = { tool: call.tool, ok: false, code: error.code, message: error.message };
    console.log(JSON.stringify(outcome));
  }
}
await client.close();
