// The benchmark's echo server for the TypeScript SDKs, the counterpart of
// benchmarks/servers/ours.py and sdk.py: the tools `echo` (a plain function) and
// `echo_async` (an async function), each taking {text: string} and answering it
// as one text block. Written once for each SDK generation, in its documented style:
//
//   v1  @modelcontextprotocol/sdk 1.32.2: McpServer + a zod raw shape;
//       speaks the 2025 era only (its newest revision is 2025-11-25).
//   v2  @modelcontextprotocol/server 2.4.0: McpServer + a zod object;
//       speaks both eras (2026-07-28 through its serving entries).
//
//   node server.mjs --sdk v1|v2 --transport stdio|http [--port P] [--host 127.0.0.1]
//
// HTTP, v1: the stateful Streamable HTTP recipe of its README (one transport and
// one McpServer per session, found by the mcp-session-id header).
// HTTP, v2: `createMcpHandler` (serves 2026-07-28 per request, and the 2025 era
// per request by its default `legacy: 'stateless'`) behind `toNodeHandler` of
// @modelcontextprotocol/node on a plain node:http server.
// stdio, v1: McpServer.connect(StdioServerTransport); v2: serveStdio(factory).
// Nothing is logged per request; stdout is the protocol channel on stdio.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';

const INFO = { name: 'bench', version: '1.0.0' };

function text(value) {
    return { content: [{ type: 'text', text: value }] };
}

/** The echo server on @modelcontextprotocol/sdk 1.32.2 (TS v1). */
export async function serverV1() {
    const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
    return () => {
        const server = new McpServer(INFO);
        const shape = { text: z.string() };
        server.registerTool('echo', { description: 'Echo the text back (a plain function).', inputSchema: shape }, ({ text: t }) => text(t));
        server.registerTool(
            'echo_async',
            { description: 'Echo the text back (an async function).', inputSchema: shape },
            async ({ text: t }) => text(t)
        );
        return server;
    };
}

/** The echo server on @modelcontextprotocol/server 2.4.0 (TS v2). */
export async function serverV2() {
    const { McpServer } = await import('@modelcontextprotocol/server');
    return () => {
        const server = new McpServer(INFO);
        const schema = z.object({ text: z.string() });
        server.registerTool('echo', { description: 'Echo the text back (a plain function).', inputSchema: schema }, ({ text: t }) => text(t));
        server.registerTool(
            'echo_async',
            { description: 'Echo the text back (an async function).', inputSchema: schema },
            async ({ text: t }) => text(t)
        );
        return server;
    };
}

export const FACTORIES = { v1: serverV1, v2: serverV2 };

async function stdioV1(factory) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    await factory().connect(new StdioServerTransport());
}

async function stdioV2(factory) {
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    serveStdio(factory);
}

async function httpV1(factory) {
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const sessions = new Map();
    return async (req, res) => {
        const id = req.headers['mcp-session-id'];
        let transport = typeof id === 'string' ? sessions.get(id) : undefined;
        if (transport === undefined) {
            if (id !== undefined || req.method !== 'POST') {
                res.writeHead(404).end();
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: sid => sessions.set(sid, transport)
            });
            transport.onclose = () => {
                if (transport.sessionId) sessions.delete(transport.sessionId);
            };
            await factory().connect(transport);
        }
        await transport.handleRequest(req, res);
    };
}

async function httpV2(factory) {
    const { createMcpHandler } = await import('@modelcontextprotocol/server');
    const { toNodeHandler } = await import('@modelcontextprotocol/node');
    return toNodeHandler(createMcpHandler(factory));
}

async function main() {
    const { values } = parseArgs({
        options: {
            sdk: { type: 'string', default: 'v2' },
            transport: { type: 'string', default: 'stdio' },
            host: { type: 'string', default: '127.0.0.1' },
            port: { type: 'string', default: '8000' }
        }
    });
    const factory = await FACTORIES[values.sdk]();
    if (values.transport === 'stdio') {
        await (values.sdk === 'v1' ? stdioV1 : stdioV2)(factory);
        return;
    }
    const handle = await (values.sdk === 'v1' ? httpV1 : httpV2)(factory);
    const http = createServer((req, res) => {
        if (!req.url?.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        handle(req, res).catch(error => {
            console.error(error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        });
    });
    const stop = () => process.exit(0); // no state worth closing cleanly
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    http.listen(Number(values.port), values.host, () => console.error(`listening on ${values.host}:${values.port}`));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
    await main();
}
