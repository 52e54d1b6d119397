import path from 'node:path';
import {
  countOccurrences,
  sha256Hex,
  STREAM_CAP,
  type ChangedFile,
  type InvocationResult,
  type OutputChunk,
  type PrimitiveInput,
  type PrimitiveName,
} from '@gatehouse/shared';
import { PrimitiveFailure, type MemoryWorkspace } from './memory-workspace';

/** What a scripted command is asked: the command line, where, and the workspace it may read and change. */
export interface ExecRequest {
  command: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  workspace: MemoryWorkspace;
  signal?: AbortSignal;
}

/** What a scripted command did. Defaults: exit code 0, no output; `status` follows the exit code. */
export interface ExecReply {
  exitCode?: number | null;
  output?: string;
  status?: 'ok' | 'failed' | 'timeout' | 'aborted';
  signal?: string | null;
}

/** Stands in for bash: answers each command (it may change `workspace.files` as the command would). */
export type ExecResponder = (request: ExecRequest) => ExecReply | Promise<ExecReply>;

/** What a primitive produced, before the sandbox adds the invocation's ids (the daemon's `Outcome`). */
export type Outcome = Pick<InvocationResult, 'status' | 'output' | 'bytes' | 'truncated'> &
  Partial<Pick<InvocationResult, 'exitCode' | 'signal' | 'filesChanged' | 'data' | 'error'>>;

export interface PrimitiveContext {
  ws: MemoryWorkspace;
  /** The files as they were when the sandbox started, for `changes`. */
  baseline: ReadonlyMap<string, string>;
  exec: ExecResponder;
  outputCap: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput?: (chunk: OutputChunk) => void;
  invocationId: string;
}

const DEFAULT_LIST_LIMIT = 1000;
const DEFAULT_GREP_LIMIT = 500;

/** One primitive against the in-memory workspace, with the daemon's outputs, data and errors. */
export async function runMemoryPrimitive<P extends PrimitiveName>(
  primitive: P,
  input: PrimitiveInput<P>,
  ctx: PrimitiveContext,
): Promise<Outcome> {
  const ws = ctx.ws;
  switch (primitive) {
    case 'read_file': {
      const i = input as PrimitiveInput<'read_file'>;
      const target = ws.resolve(i.path, i.expectReal);
      const text = ws.read(target);
      const sha256 = sha256Hex(text);
      if (text.slice(0, 8192).includes('\0'))
        throw new PrimitiveFailure('binary_file', `${target.rel} looks binary`, 'failed', target.rel);
      const lines = text.length === 0 ? [] : text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      const startLine = i.offset ?? 1;
      const wanted = lines.slice(startLine - 1, i.limit === undefined ? undefined : startLine - 1 + i.limit);
      const kept: string[] = [];
      let used = 0;
      for (const line of wanted) {
        if (used + Buffer.byteLength(line) + 1 > ctx.outputCap) break;
        kept.push(line);
        used += Buffer.byteLength(line) + 1;
      }
      const output = kept.join('\n') + (kept.length > 0 ? '\n' : '');
      const data = {
        kind: 'read_file' as const,
        sha256,
        totalBytes: Buffer.byteLength(text),
        totalLines: lines.length,
        startLine,
        endLine: startLine - 1 + kept.length,
      };
      const bytes = wanted.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
      return { ...ok(output, data), bytes, truncated: kept.length < wanted.length };
    }
    case 'write_file': {
      const i = input as PrimitiveInput<'write_file'>;
      const target = ws.resolve(i.path, i.expectReal);
      if (i.expectedSha256 === null && target.exists)
        throw new PrimitiveFailure('exists', `${target.rel} already exists; read it first`, 'rejected', target.rel);
      if (typeof i.expectedSha256 === 'string') {
        const current = target.exists ? sha256Hex(ws.read(target)) : null;
        if (current !== i.expectedSha256)
          throw new PrimitiveFailure('hash_mismatch', `${target.rel} changed since it was read; read it again`);
      }
      ws.write(target.rel, i.content);
      const data = { kind: 'write_file' as const, sha256: sha256Hex(i.content), created: !target.exists };
      const said = `wrote ${Buffer.byteLength(i.content)} bytes to ${target.rel}`;
      return { ...ok(said, data), filesChanged: [target.rel] };
    }
    case 'edit_file': {
      const i = input as PrimitiveInput<'edit_file'>;
      const target = ws.resolve(i.path, i.expectReal);
      const before = ws.read(target);
      const previousSha256 = sha256Hex(before);
      if (previousSha256 !== i.expectedSha256) {
        const message = `${target.rel} changed since it was read; read it again before editing`;
        throw new PrimitiveFailure('hash_mismatch', message, 'rejected', target.rel);
      }
      const first = before.indexOf(i.oldText);
      if (first < 0)
        throw new PrimitiveFailure('old_text_not_found', `oldText does not occur in ${target.rel}`, 'rejected');
      const count = countOccurrences(before, i.oldText);
      if (count > 1) {
        const message = `oldText occurs ${count} times in ${target.rel}; include more context to make it unique`;
        throw new PrimitiveFailure('old_text_not_unique', message, 'rejected', target.rel);
      }
      const after = before.slice(0, first) + i.newText + before.slice(first + i.oldText.length);
      ws.write(target.rel, after);
      const data = { kind: 'edit_file' as const, sha256: sha256Hex(after), previousSha256 };
      return { ...ok(`edited ${target.rel}`, data), filesChanged: [target.rel] };
    }
    case 'list': {
      const i = input as PrimitiveInput<'list'>;
      const target = directory(ws, i.path ?? '.', i.expectReal);
      const all = ws.entries(target.rel, i.recursive ?? false);
      const limit = i.limit ?? DEFAULT_LIST_LIMIT;
      const entries = all
        .slice(0, limit)
        .map((e) => ({ ...e, size: e.type === 'file' ? Buffer.byteLength(ws.files.get(e.path) ?? '') : 0 }));
      const output = entries
        .map((e) => (e.type === 'dir' ? `${e.path}/` : e.type === 'symlink' ? `${e.path}@` : e.path))
        .join('\n');
      return { ...ok(output, { kind: 'list', entries }), truncated: all.length > limit };
    }
    case 'glob': {
      const i = input as PrimitiveInput<'glob'>;
      const base = directory(ws, i.path ?? '.');
      const isMatch = globPattern(i.pattern);
      const skipModules = !i.pattern.includes('node_modules');
      const found = ws
        .entries(base.rel, true)
        .filter((e) => e.type === 'file' && !(skipModules && e.path.split('/').includes('node_modules')))
        .map((e) => e.path)
        .filter((p) => isMatch.test(base.rel === '.' ? p : p.slice(base.rel.length + 1)));
      const limit = i.limit ?? DEFAULT_LIST_LIMIT;
      const paths = found.slice(0, limit);
      return { ...ok(paths.join('\n'), { kind: 'glob', paths }), truncated: found.length > limit };
    }
    case 'grep':
      return grep(ws, input as PrimitiveInput<'grep'>);
    case 'exec':
      return exec(input as PrimitiveInput<'exec'>, ctx);
    case 'changes':
      return changes(ws, ctx.baseline);
    case 'resolve': {
      const paths = (input as PrimitiveInput<'resolve'>).paths.map((p) => ws.locate(p));
      const output = paths.map((r) => `${r.path} -> ${r.real ?? '?'}`).join('\n');
      return ok(output, { kind: 'resolve', paths });
    }
  }
  throw new PrimitiveFailure('invalid_message', `unknown primitive ${String(primitive)}`);
}

function ok(output: string, data: NonNullable<Outcome['data']>): Outcome {
  return { status: 'ok', exitCode: null, output, bytes: Buffer.byteLength(output), truncated: false, data };
}

function directory(ws: MemoryWorkspace, p: string, expectReal?: string) {
  const target = ws.resolve(p, expectReal);
  if (!target.exists) throw new PrimitiveFailure('not_found', `${target.rel} does not exist`, 'failed', target.rel);
  if (!target.isDirectory)
    throw new PrimitiveFailure('not_a_directory', `${target.rel} is not a directory`, 'rejected', target.rel);
  return target;
}

function grep(ws: MemoryWorkspace, i: PrimitiveInput<'grep'>): Outcome {
  const target = ws.resolve(i.path ?? '.', i.expectReal);
  if (!target.exists) throw new PrimitiveFailure('not_found', `${target.rel} does not exist`, 'failed', target.rel);
  let re: RegExp;
  try {
    re = new RegExp(i.pattern, i.ignoreCase ? 'i' : '');
  } catch (e) {
    const output = `grep: ${(e as Error).message}`;
    return {
      status: 'failed',
      exitCode: 2,
      output,
      bytes: Buffer.byteLength(output),
      truncated: false,
      error: { code: 'io_error', message: output },
    };
  }
  const include = i.include ? globPattern(i.include) : undefined;
  const files = target.isDirectory
    ? ws
        .entries(target.rel, true)
        .filter((e) => e.type === 'file' && !e.path.split('/').includes('node_modules'))
        .map((e) => e.path)
    : [target.rel];
  const limit = i.limit ?? DEFAULT_GREP_LIMIT;
  const matches: Array<{ path: string; line: number; text: string }> = [];
  let truncated = false;
  for (const file of files) {
    const text = ws.files.get(file) ?? '';
    if (text.includes('\0') || (include && !include.test(path.posix.basename(file)))) continue;
    for (const [n, line] of text.split('\n').entries()) {
      if (!re.test(line)) continue;
      if (matches.length >= limit) truncated = true;
      else matches.push({ path: file, line: n + 1, text: line });
    }
  }
  const output = matches.map((m) => `${m.path}:${m.line}:${m.text}`).join('\n');
  return {
    status: 'ok',
    exitCode: matches.length > 0 ? 0 : 1,
    signal: null,
    output,
    bytes: Buffer.byteLength(output),
    truncated,
    data: { kind: 'grep', matches },
  };
}

async function exec(i: PrimitiveInput<'exec'>, ctx: PrimitiveContext): Promise<Outcome> {
  const cwd = directory(ctx.ws, i.cwd ?? '.');
  const before = i.trackChanges ? ctx.ws.snapshot() : undefined;
  const reply = await ctx.exec({
    command: i.command,
    cwd: cwd.rel,
    env: { ...(i.env ?? {}) },
    timeoutMs: ctx.timeoutMs,
    workspace: ctx.ws,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const full = reply.output ?? '';
  // Streamed as the daemon streams (up to its cap), so the pipeline's full-output logic is exercised.
  let seq = 0;
  for (let at = 0; at < Math.min(full.length, STREAM_CAP); at += 64 * 1024) {
    const data = full.slice(at, Math.min(at + 64 * 1024, STREAM_CAP));
    ctx.onOutput?.({ v: 1, invocationId: ctx.invocationId, seq: seq++, stream: 'stdout', data });
  }
  const bytes = Buffer.byteLength(full);
  const exitCode = reply.exitCode === undefined ? (reply.status === 'timeout' ? null : 0) : reply.exitCode;
  const status = reply.status ?? (exitCode === 0 ? 'ok' : 'failed');
  const error =
    status === 'timeout'
      ? { code: 'timeout' as const, message: `timed out after ${ctx.timeoutMs} ms; the process group was killed` }
      : status === 'aborted'
        ? { code: 'cancelled' as const, message: 'cancelled; the process group was killed' }
        : undefined;
  return {
    status,
    exitCode,
    signal: reply.signal ?? null,
    output: headTail(full, ctx.outputCap),
    bytes,
    truncated: bytes > ctx.outputCap,
    filesChanged: before ? changedFiles(before, ctx.ws.files).map((f) => f.path) : [],
    data: { kind: 'exec', stdoutBytes: bytes, stderrBytes: 0 },
    ...(error ? { error } : {}),
  };
}

function changes(ws: MemoryWorkspace, baseline: ReadonlyMap<string, string>): Outcome {
  const files = changedFiles(baseline, ws.files);
  // Whole-file hunks, not git's: enough to see what changed, not to apply with git.
  const output = files
    .map((f) => {
      const old = baseline.get(f.path);
      const now = ws.files.get(f.path);
      const minus = old === undefined ? [] : old.split('\n').map((l) => `-${l}`);
      const plus = now === undefined ? [] : now.split('\n').map((l) => `+${l}`);
      return [`--- a/${f.path}`, `+++ b/${f.path}`, ...minus, ...plus].join('\n');
    })
    .join('\n');
  return { ...ok(output, { kind: 'changes', files }), exitCode: 0, filesChanged: files.map((f) => f.path) };
}

function changedFiles(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): ChangedFile[] {
  const files: ChangedFile[] = [];
  for (const [p, content] of after) {
    const was = before.get(p);
    if (was === undefined) files.push({ path: p, status: 'added' });
    else if (was !== content) files.push({ path: p, status: 'modified' });
  }
  for (const p of before.keys()) if (!after.has(p)) files.push({ path: p, status: 'deleted' });
  return files.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The daemon's capture: head and tail within the cap, and a marker for what was dropped. */
function headTail(text: string, cap: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= cap) return text;
  const head = buf.subarray(0, Math.ceil(cap / 2));
  const tail = buf.subarray(buf.length - (cap - head.length));
  const dropped = buf.length - head.length - tail.length;
  return `${head.toString('utf8')}\n[… ${dropped} bytes omitted …]\n${tail.toString('utf8')}`;
}

/** A glob as the daemon matches it: `**` crosses directories, `*` and `?` do not. */
export function globPattern(glob: string): RegExp {
  let re = '';
  for (let k = 0; k < glob.length; k++) {
    const c = glob[k]!;
    if (c === '*' && glob[k + 1] === '*') {
      const slash = glob[k + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      k += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
