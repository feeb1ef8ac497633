// The benchmark's client loop for the TypeScript SDKs, driven by benchmarks/run.py.
//
//   node client.mjs --sdk v1|v2 --era legacy|2026 --target inproc|stdio|URL
//                   [--clients N] [--workers N] [--tool echo|echo_async]
//                   [--server-sdk v1|v2] [--server-command JSON]
//
// It connects `--clients` clients (each its own connection) of the SDK to the
// target, checks the negotiated protocol version and prints one JSON line,
// {"ready": true, "protocol": "..."}. Then it reads JSON lines on stdin and
// answers each with one JSON line on stdout:
//
//   {"op": "run", "n": N}  ->  {"calls": C, "seconds": S, "latencies": [s, ...]}
//   {"op": "close"}        ->  {"closed": true}, then it exits
//
// "run" is run.py's `run_calls`: N calls in all by `--workers` concurrent loops
// (loop i uses client i % clients), each call timed alone with
// performance.now(); C = ceil(N / workers) * workers. Every answer is checked
// (not an error, one text block "hello world"). The warm-up and the calibration
// are run.py's, the same as for the Python sides; the JSON has the shape of its
// `Sample`. Targets:
//
//   inproc  client and server in this process over the SDK's InMemoryTransport
//           (linked pair; it hands message objects across, no JSON). v1: the
//           server end is McpServer.connect(); v2: legacy the same, 2026-07-28
//           through serveStdio(factory, {transport}) (the SDK's per-connection
//           entry, which is what pins the modern era; McpServer.connect() alone
//           serves the 2025 era only).
//           `--inproc-wire bytes` (a diagnostic, not used by run.py) makes both
//           ends send what stdio would carry instead: each message to JSON text,
//           to UTF-8 bytes and back, then parsed (what passing objects saves).
//   stdio   the client spawns the server: `--server-command` (a JSON array), by
//           default `node server.mjs --sdk <server-sdk> --transport stdio`.
//   URL     Streamable HTTP to a server that is already listening.
//
// Eras: legacy = the initialize handshake at the SDK's newest 2025 revision
// (2025-11-25 for both); 2026 = v2 with versionNegotiation {pin: '2026-07-28'}.
// v1 has no 2026-07-28: asked for it, this exits with status 3.

import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { FACTORIES } from './server.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ARGS = { text: 'hello world' };
const EXPECTED = 'hello world';
const MODERN = '2026-07-28';
const INFO = { name: 'bench-client', version: '1.0.0' };

/** One JSON line on stdout; resolves once it is handed to the pipe (a long line
 * may be written in parts, and process.exit() would drop what is left). */
function emit(value) {
    return new Promise(resolve => process.stdout.write(JSON.stringify(value) + '\n', resolve));
}

function fail(message, status = 1) {
    process.stderr.write(`client.mjs: ${message}\n`);
    process.exit(status);
}

const { values: opts } = parseArgs({
    options: {
        sdk: { type: 'string', default: 'v2' },
        era: { type: 'string', default: 'legacy' },
        target: { type: 'string', default: 'inproc' },
        clients: { type: 'string', default: '1' },
        workers: { type: 'string', default: '1' },
        tool: { type: 'string', default: 'echo' },
        'server-sdk': { type: 'string' },
        'server-command': { type: 'string' },
        'inproc-wire': { type: 'string', default: 'objects' }
    }
});
const sdk = opts.sdk;
const era = opts.era;
const serverSdk = opts['server-sdk'] ?? sdk;
if (!['v1', 'v2'].includes(sdk) || !['v1', 'v2'].includes(serverSdk)) fail(`unknown --sdk ${sdk}`, 2);
if (!['legacy', '2026'].includes(era)) fail(`unknown --era ${era}`, 2);
if (sdk === 'v1' && era === '2026') fail('@modelcontextprotocol/sdk 1.32.2 speaks no 2026-07-28 (newest: 2025-11-25)', 3);

/** The SDK's client pieces: {Client, StdioClientTransport, StreamableHTTPClientTransport, InMemoryTransport}. */
async function clientModules() {
    if (sdk === 'v1') {
        const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { InMemoryTransport }] = await Promise.all([
            import('@modelcontextprotocol/sdk/client/index.js'),
            import('@modelcontextprotocol/sdk/client/stdio.js'),
            import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
            import('@modelcontextprotocol/sdk/inMemory.js')
        ]);
        return { Client, StdioClientTransport, StreamableHTTPClientTransport, InMemoryTransport };
    }
    const [{ Client, StreamableHTTPClientTransport, InMemoryTransport }, { StdioClientTransport }] = await Promise.all([
        import('@modelcontextprotocol/client'),
        import('@modelcontextprotocol/client/stdio')
    ]);
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, InMemoryTransport };
}

/** `transport` sends each message as stdio's bytes would carry it, decoded again. */
function throughBytes(transport) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
        const bytes = Buffer.from(JSON.stringify(message) + '\n', 'utf8');
        return send(JSON.parse(bytes.toString('utf8', 0, bytes.length - 1)), options);
    };
}

/** The server end of an in-process pair, on `transport`. */
async function serveInProcess(transport) {
    const factory = await FACTORIES[serverSdk]();
    if (serverSdk === 'v2' && era === '2026') {
        const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
        return serveStdio(factory, { transport });
    }
    const server = factory();
    await server.connect(transport);
    return server;
}

/** One connected client; returns {client, protocol, close}. */
async function connect(mods) {
    const options = era === '2026' ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
    const client = new mods.Client(INFO, options);
    let negotiated;
    if (sdk === 'v1') {
        // v1 does not expose the negotiated revision: read it off the initialize result.
        const request = client.request.bind(client);
        client.request = (req, ...rest) => {
            const answer = request(req, ...rest);
            if (req.method === 'initialize') answer.then(result => (negotiated = result.protocolVersion)).catch(() => {});
            return answer;
        };
    }
    let transport;
    let server;
    if (opts.target === 'inproc') {
        const [clientEnd, serverEnd] = mods.InMemoryTransport.createLinkedPair();
        if (opts['inproc-wire'] === 'bytes') {
            throughBytes(clientEnd);
            throughBytes(serverEnd);
        } else if (opts['inproc-wire'] !== 'objects') {
            fail(`unknown --inproc-wire ${opts['inproc-wire']}`, 2);
        }
        server = await serveInProcess(serverEnd);
        transport = clientEnd;
    } else if (opts.target === 'stdio') {
        const command = opts['server-command']
            ? JSON.parse(opts['server-command'])
            : [process.execPath, `${HERE}server.mjs`, '--sdk', serverSdk, '--transport', 'stdio'];
        // The SDK passes the child a minimal environment (PATH, HOME, ...); the tag
        // of tests/interop's leak check is added to it when set.
        const tag = process.env.MCP_INTEROP_TAG;
        transport = new mods.StdioClientTransport({
            command: command[0],
            args: command.slice(1),
            cwd: process.cwd(),
            stderr: 'inherit',
            ...(tag !== undefined && { env: { MCP_INTEROP_TAG: tag } })
        });
    } else {
        transport = new mods.StreamableHTTPClientTransport(new URL(opts.target));
    }
    await client.connect(transport);
    const protocol = sdk === 'v1' ? negotiated : client.getNegotiatedProtocolVersion();
    const close = async () => {
        await client.close();
        await server?.close?.();
    };
    return { client, protocol, close };
}

function callOf(client, tool) {
    const params = { name: tool, arguments: ARGS };
    return async () => {
        const result = await client.callTool(params);
        const block = result.content?.[0];
        if (result.isError || result.content.length !== 1 || block.type !== 'text' || block.text !== EXPECTED) {
            throw new Error(`${tool} answered ${JSON.stringify(result)}`);
        }
    };
}

/** run.py's run_calls: n calls by `workers` loops, each call timed. */
async function runCalls(calls, n, workers) {
    const perWorker = Math.max(1, Math.ceil(n / workers));
    const latencies = [];
    const worker = async call => {
        for (let i = 0; i < perWorker; i++) {
            const start = performance.now();
            await call();
            latencies.push((performance.now() - start) / 1e3);
        }
    };
    const start = performance.now();
    const loops = [];
    for (let i = 0; i < workers; i++) loops.push(worker(calls[i % calls.length]));
    await Promise.all(loops);
    return { calls: perWorker * workers, seconds: (performance.now() - start) / 1e3, latencies };
}

async function main() {
    const mods = await clientModules();
    const count = Number(opts.clients);
    const workers = Number(opts.workers);
    const sessions = [];
    for (let i = 0; i < count; i++) sessions.push(await connect(mods));
    const protocols = [...new Set(sessions.map(s => s.protocol))];
    const calls = sessions.map(s => callOf(s.client, opts.tool));
    await calls[0](); // one checked call before reporting ready
    await emit({ ready: true, protocol: protocols.length === 1 ? protocols[0] : protocols, sdk, era });

    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
        if (!line.trim()) continue;
        const command = JSON.parse(line);
        if (command.op === 'run') {
            await emit(await runCalls(calls, command.n, workers));
        } else if (command.op === 'close') {
            break;
        } else {
            throw new Error(`unknown op ${command.op}`);
        }
    }
    for (const s of sessions) await s.close();
    await emit({ closed: true });
    process.exit(0); // stdio children are gone; nothing else is worth waiting for
}

main().catch(error => fail(error?.stack ?? String(error)));
