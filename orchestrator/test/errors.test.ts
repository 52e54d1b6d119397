import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ApprovalCommandError } from '../src/cli/approvals';
import { OutputFileError } from '../src/cli/atomic-write';
import { PolicyCheckUsageError } from '../src/cli/policy';
import { UsageError } from '../src/cli/usage';
import { ConfigError, ConfigRefusedError } from '../src/config/errors';
import { PlainFileError } from '../src/files/read-plain-file';
import { JsonSyntaxError } from '../src/problems/json-text';
import { SuiteError } from '../src/eval/suite-error';
import { errorKindOf, GatehouseError, type ErrorKind } from '../src/errors';
import { ArtifactError } from '../src/events/artifacts';
import { LogKeyError } from '../src/events/key';
import { McpRequestError } from '../src/mcp-server/allowed-path';
import { RunLockedError } from '../src/events/lock';
import { InvalidRunIdError } from '../src/events/paths';
import { AmbiguousRunError, RunNotFoundError } from '../src/events/run-ref';
import { StateDirError } from '../src/events/state-home';
import { EventDataError, EventLogCorruptError, LogSchemaTooNewError } from '../src/events/log-errors';
import { ApplyError } from '../src/loop/change-set';
import { ResumeError } from '../src/run/resume';
import { McpResumeError } from '../src/mcp/recorded-servers';
import { QueueUnavailableError } from '../src/queue/open-queue';
import { SnapshotError } from '../src/queue/snapshot';
import { SubmitError } from '../src/queue/submit';
import { PolicyFileError } from '../src/policy/file';
import { RuleSyntaxError } from '../src/policy/rules';
import { MissingCredentialError, ModelSpecError, ProviderSetupError, ScriptError } from '../src/providers/errors';
import { IncompleteStreamError } from '../src/providers/failure';
import { DockerUnavailableError, ProtocolError, SandboxError, SandboxLostError } from '../src/sandbox/errors';
import { SavedWorkspaceError } from '../src/sandbox/workspace-save';
import { DockerHostSyntaxError } from '../src/sandbox/docker-host';
import { NoPriceError } from '../src/usage/require-price';
import { ReplayError } from '../src/replay/replay-error';
import { ReplayModelError } from '../src/replay/ask-model';
import { RunFencedError, RunNotStoredError, StoreUnavailableError, StoreUrlError } from '../src/store/store-errors';

/** Every error class the orchestrator declares, one made the way its code makes it, and its kind. */
const CLASSES: Record<string, [Error, ErrorKind]> = {
  UsageError: [new UsageError('--json needs --tree'), 'usage'],
  PolicyCheckUsageError: [new PolicyCheckUsageError('--input is missing'), 'usage'],
  ProviderSetupError: [new ProviderSetupError('setup'), 'usage'],
  ModelSpecError: [new ModelSpecError('Unknown model provider'), 'usage'],
  NoPriceError: [new NoPriceError('--max-cost needs a price'), 'usage'],
  MissingCredentialError: [new MissingCredentialError('OPENAI_API_KEY', 'set OPENAI_API_KEY'), 'usage'],
  ScriptError: [new ScriptError('/x.json', 'Model script not found'), 'usage'],
  PolicyFileError: [new PolicyFileError('cannot read policy file'), 'usage'],
  RuleSyntaxError: [new RuleSyntaxError('"(" is not a rule'), 'usage'],
  ConfigError: [new ConfigError([{ file: '/c.json', path: 'image', message: 'expected a string, got 3' }]), 'usage'],
  SuiteError: [
    new SuiteError('/s.json', [{ file: '/s.json', path: 'tasks[0].id', message: 'expected a string' }]),
    'usage',
  ],
  ConfigRefusedError: [new ConfigRefusedError('.gatehouse/config.json is a symbolic link'), 'refused'],
  PlainFileError: [new PlainFileError('.gatehouse/policy.json', 'not-regular', 'is a socket'), 'refused'],
  JsonSyntaxError: [new JsonSyntaxError(3, 'unexpected "}"'), 'usage'],
  ApprovalCommandError: [new ApprovalCommandError('no approval request'), 'refused'],
  ResumeError: [new ResumeError('already ended'), 'refused'],
  McpResumeError: [new McpResumeError('run run_a cannot be resumed without mcp.fs.env.TOKEN'), 'refused'],
  SubmitError: [new SubmitError('run_a was not submitted through this queue'), 'refused'],
  SnapshotError: [new SnapshotError('the snapshot does not match its job'), 'environment'],
  QueueUnavailableError: [new QueueUnavailableError('cannot reach the NATS server'), 'environment'],
  RunLockedError: [new RunLockedError('run_a', 'host:1:2'), 'refused'],
  InvalidRunIdError: [new InvalidRunIdError('bad!id'), 'refused'],
  RunNotFoundError: [new RunNotFoundError('run run_x not found'), 'refused'],
  AmbiguousRunError: [new AmbiguousRunError('run_', ['run_a', 'run_b']), 'usage'],
  StateDirError: [new StateDirError('the log key is inside the state directory'), 'environment'],
  EventLogCorruptError: [
    new EventLogCorruptError('/x/events.jsonl', { line: 3, reason: 'bad hash' }, 'run_a'),
    'refused',
  ],
  ArtifactError: [new ArtifactError('artifact not found'), 'refused'],
  SavedWorkspaceError: [new SavedWorkspaceError('cannot be restored'), 'refused'],
  ApplyError: [new ApplyError('applying stopped'), 'refused'],
  SandboxError: [new SandboxError('no daemon listening'), 'environment'],
  SandboxLostError: [new SandboxLostError('sb_1', 'no heartbeat'), 'environment'],
  DockerUnavailableError: [new DockerUnavailableError('Docker is not running'), 'environment'],
  DockerHostSyntaxError: [new DockerHostSyntaxError('"x" is not a Docker host'), 'usage'],
  IncompleteStreamError: [new IncompleteStreamError('stream ended early'), 'environment'],
  LogKeyError: [new LogKeyError('key file is world-readable'), 'environment'],
  ProtocolError: [new ProtocolError('invalid result'), 'internal'],
  EventDataError: [new EventDataError('tool.intent', 'does not fit'), 'internal'],
  LogSchemaTooNewError: [new LogSchemaTooNewError('run run_a: event log x, line 1: newer'), 'refused'],
  McpRequestError: [new McpRequestError('the repository /x is outside the folders this server accepts'), 'refused'],
  // Its kind is the one it is made with: usage for a path that cannot be written, environment otherwise.
  OutputFileError: [new OutputFileError('usage', 'cannot write /x/r.md: ENOENT'), 'usage'],
  ReplayError: [new ReplayError('refused', 'run run_a is itself a replay'), 'refused'],
  ReplayModelError: [new ReplayModelError('the model openai:x failed (server): 500'), 'environment'],
  StoreUrlError: [new StoreUrlError('--store "http://h:1" is not a NATS URL'), 'usage'],
  StoreUnavailableError: [new StoreUnavailableError('cannot reach the event store at nats://h:1'), 'environment'],
  RunFencedError: [new RunFencedError('run_a', 'the store has run_a:3 where run_a:2 was expected'), 'refused'],
  RunNotStoredError: [new RunNotStoredError('run run_a is not in the store nats://h:1'), 'refused'],
};

describe('every error class has its kind', () => {
  it.each(Object.entries(CLASSES))('%s', (name, [error, kind]) => {
    expect(error).toBeInstanceOf(GatehouseError);
    expect((error as GatehouseError).kind).toBe(kind);
    expect(errorKindOf(error)).toBe(kind);
    expect(error.constructor.name).toBe(name);
  });

  it('keeps the messages and names the classes had (String(error) is recorded and printed)', () => {
    expect(String(CLASSES.UsageError![0])).toBe('Error: --json needs --tree');
    expect(String(CLASSES.ModelSpecError![0])).toBe('ModelSpecError: Unknown model provider');
    expect(CLASSES.RunLockedError![0].message).toBe(
      'run run_a is being written by a live gatehouse process (host:1:2); answer its approvals at its prompt or over ' +
        'NATS, or wait for it to stop',
    );
    expect(CLASSES.InvalidRunIdError![0].name).toBe('InvalidRunIdError');
  });

  it('anything not a GatehouseError is internal', () => {
    expect(errorKindOf(new Error('run x not found'))).toBe('internal');
    expect(errorKindOf(new TypeError('x is undefined'))).toBe('internal');
    expect(errorKindOf('thrown string')).toBe('internal');
  });

  // A new error class must say its kind (and be listed above), or it would exit as internal.
  it('lists every error class declared in the orchestrator', () => {
    const src = fileURLToPath(new URL('../src', import.meta.url));
    const declared: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        // src/testing holds test doubles: its PrimitiveFailure mirrors the daemon's wire-level error
        // inside the in-memory sandbox and never reaches a person.
        if (e.isDirectory()) {
          if (e.name !== 'testing') walk(p);
        } else if (p.endsWith('.ts'))
          for (const m of readFileSync(p, 'utf8').matchAll(/\bclass (\w+) extends (\w*Error)\b/g))
            declared.push(m[1] as string);
      }
    };
    walk(src);
    expect(declared.filter((c) => c !== 'GatehouseError').sort()).toEqual(Object.keys(CLASSES).sort());
  });
});
