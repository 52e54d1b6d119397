import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { AnthropicProvider } from '../../orchestrator/src/providers/anthropic';
import { OpenAIProvider } from '../../orchestrator/src/providers/openai';
import type { ModelEvent, ModelProvider, ModelRequest } from '../../orchestrator/src/providers/types';
import { expectedOutcome, type Expected } from './expected';
import { loadCases, servedResponse, type RecordingCase, type ServedResponse } from './recordings';

/**
 * Replays recorded provider traffic against the real provider classes: each recording is served
 * from a loopback HTTP server (the SDKs talk real HTTP and SSE to it), and what the provider makes
 * of it is compared with what the recording holds (expected.ts). Nothing leaves 127.0.0.1.
 */
export interface CaseResult {
  id: string;
  tier: string;
  provider: string;
  ok: boolean;
  /** Requests the provider sent: more than one means it retried a response it should have taken. */
  requests: number;
  got: Record<string, unknown>;
  mismatches: string[];
}

export interface ReplayReport {
  recordings: string;
  total: number;
  passed: number;
  failed: number;
  cases: CaseResult[];
}

/** The environment variable that names the recordings folder. */
export const RECORDINGS_ENV = 'GATEHOUSE_PROVIDER_RECORDINGS';

// The providers' own default attempt count, with short waits: a retry shows up as extra requests.
const RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 };
const CASE_TIMEOUT_MS = 20_000;

export async function replayRecordings(dir: string): Promise<ReplayReport> {
  const cases = loadCases(dir);
  const server = await LoopbackServer.start();
  try {
    const results: CaseResult[] = [];
    for (const c of cases) results.push(await replayCase(dir, c, server));
    const passed = results.filter((r) => r.ok).length;
    return { recordings: dir, total: results.length, passed, failed: results.length - passed, cases: results };
  } finally {
    await server.close();
  }
}

async function replayCase(dir: string, c: RecordingCase, server: LoopbackServer): Promise<CaseResult> {
  const base = { id: c.id, tier: c.tier, provider: c.provider };
  let served: ServedResponse;
  let expected: Expected;
  try {
    served = servedResponse(dir, c);
    expected = expectedOutcome(c, served);
  } catch (e) {
    return { ...base, ok: false, requests: 0, got: {}, mismatches: [`unreadable recording: ${(e as Error).message}`] };
  }
  server.serve(served);
  const events: ModelEvent[] = [];
  const signal = AbortSignal.timeout(CASE_TIMEOUT_MS);
  for await (const event of providerFor(c, server.url).stream(requestFor(signal))) events.push(event);
  const result = compare(expected, events, server.requests);
  return { ...base, ok: result.mismatches.length === 0, requests: server.requests, ...result };
}

function providerFor(c: RecordingCase, url: string): ModelProvider {
  const common = { model: c.model, apiKey: 'replay-key', retry: RETRY, timeoutMs: 10_000 };
  return c.provider === 'openai'
    ? new OpenAIProvider({ ...common, baseUrl: `${url}/v1` })
    : new AnthropicProvider({ ...common, baseUrl: url });
}

function requestFor(signal: AbortSignal): ModelRequest {
  return {
    system: 'Replay.',
    messages: [{ role: 'user', content: 'Replay the recording.' }],
    tools: [{ name: 'tool', description: 'A tool', inputSchema: { type: 'object', properties: {} } }],
    signal,
  };
}

function compare(
  expected: Expected,
  events: ModelEvent[],
  requests: number,
): { got: Record<string, unknown>; mismatches: string[] } {
  const end = events.at(-1);
  const retries = events.filter((e) => e.type === 'retry').length;
  const mismatches: string[] = [];
  // A cut connection is retried while nothing was shown; anything else must be taken the first time.
  if (expected.kind !== 'incomplete' && (requests !== 1 || retries !== 0))
    mismatches.push(`sent ${requests} requests (${retries} retries); expected 1`);
  if (end?.type === 'error') {
    const got = { kind: 'error', errorKind: end.kind, message: end.message };
    if (expected.kind === 'incomplete') {
      if (end.kind !== 'network') mismatches.push(`error kind ${end.kind}; expected network (a cut stream)`);
    } else if (expected.kind !== 'error') mismatches.push(`ended in a ${end.kind} error; expected ${expected.kind}`);
    else if (end.kind !== expected.errorKind) mismatches.push(`error kind ${end.kind}; expected ${expected.errorKind}`);
    return { got, mismatches };
  }
  if (end?.type !== 'done') return { got: { kind: 'none' }, mismatches: [...mismatches, 'the stream gave no result'] };
  const toolCalls = end.toolCalls.map((call) => ({
    id: call.id,
    name: call.name,
    input: call.input,
    ...(call.truncated ? { truncated: true } : {}),
  }));
  const got = {
    kind: 'done',
    stopReason: end.stopReason,
    ...(end.stopNote ? { stopNote: end.stopNote } : {}),
    textChars: end.text.length,
    toolCalls: toolCalls.map((call) => `${call.name}${call.truncated ? ' (cut off)' : ''}`),
    usage: end.usage,
  };
  if (expected.kind !== 'done') return { got, mismatches: [...mismatches, `accepted; expected ${expected.kind}`] };
  if (end.text !== expected.text) mismatches.push(`text differs (${end.text.length} vs ${expected.text.length} chars)`);
  if (!isDeepStrictEqual(toolCalls, expected.toolCalls))
    mismatches.push(`tool calls ${JSON.stringify(toolCalls)}; expected ${JSON.stringify(expected.toolCalls)}`);
  if (end.stopReason !== expected.stopReason)
    mismatches.push(`stop ${end.stopReason}; expected ${expected.stopReason}`);
  if (expected.inferred !== (end.stopNote !== undefined))
    mismatches.push(expected.inferred ? 'no stopNote for an inferred stop reason' : 'a stopNote on a stated stop');
  const usage = { inputTokens: end.usage.inputTokens, outputTokens: end.usage.outputTokens };
  if (!isDeepStrictEqual(usage, expected.usage))
    mismatches.push(`usage ${JSON.stringify(usage)}; expected ${JSON.stringify(expected.usage)}`);
  return { got, mismatches };
}

/** One loopback server for the whole replay; it answers every request with the case being served. */
class LoopbackServer {
  requests = 0;
  #served: ServedResponse | undefined;
  readonly #server: http.Server;
  readonly url: string;

  private constructor(server: http.Server) {
    this.#server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(): Promise<LoopbackServer> {
    const holder: { self?: LoopbackServer } = {};
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => holder.self?.answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.self = new LoopbackServer(server);
    return holder.self;
  }

  serve(response: ServedResponse): void {
    this.#served = response;
    this.requests = 0;
  }

  answer(res: http.ServerResponse): void {
    this.requests++;
    const served = this.#served ?? { status: 599, headers: {}, body: 'no recording is being served' };
    res.writeHead(served.status, served.headers);
    res.end(served.body);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * The command line: `replay-recordings [--dir PATH]`. Prints the JSON report on stdout and a
 * one-line verdict on stderr; exits 0 when every recording parses as expected, 1 on a mismatch,
 * 2 when the recordings cannot be found or the arguments are wrong.
 */
export async function main(argv: string[], defaultDir: string, env = process.env): Promise<number> {
  const flag = argv.indexOf('--dir');
  if (argv.some((a, i) => a !== '--dir' && i !== flag + 1) || (flag >= 0 && argv[flag + 1] === undefined)) {
    process.stderr.write(`usage: npm run replay-recordings [-- --dir PATH]\n`);
    return 2;
  }
  const dir = flag >= 0 ? argv[flag + 1]! : (env[RECORDINGS_ENV] ?? defaultDir);
  if (!existsSync(`${dir}/cases.json`)) {
    process.stderr.write(
      `replay-recordings: no recordings at ${dir} (no cases.json there). Point --dir or ${RECORDINGS_ENV} ` +
        `at the provider-recordings folder (it is not part of this repository).\n`,
    );
    return 2;
  }
  const report = await replayRecordings(dir);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const failed = report.cases.filter((c) => !c.ok).map((c) => c.id);
  process.stderr.write(
    `replay-recordings: ${report.passed} of ${report.total} recordings parse as expected` +
      (failed.length > 0 ? `; mismatched: ${failed.join(', ')}\n` : '\n'),
  );
  return failed.length > 0 ? 1 : 0;
}
