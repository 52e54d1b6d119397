import type { FailureClass, FailureInput } from './plan-types';

/**
 * The failure classifier's rules, as data (classify-failure.ts applies them in order; the first
 * that finds evidence decides). Structured facts (the sandbox was lost, the gate denied, validation
 * refused, the execution timed out) come before words in the output, and words for permission come
 * before words for a transient error: asking a person is the safe side of a wrong guess. Numbers
 * count only in an HTTP context (`HTTP/1.1 503`, `status 502`, `429 Too Many Requests`), never bare:
 * a line number 500 in grep output or a file named 403.md says nothing about a server.
 * Each rule carries examples that must and must not match, checked when the module loads.
 */
export interface FailureRule {
  name: string;
  class: FailureClass;
  /** The exact text, status or exit code that decided, or undefined when the rule does not apply. */
  evidence(f: FailureInput): string | undefined;
  examples: { match: FailureInput[]; notMatch: FailureInput[] };
}

/** Output is searched in its first and last part only: what a failing tool says is at its ends. */
const SCAN = 64 * 1024;

function textOf(f: FailureInput): string {
  const t = f.kind === 'call' ? f.content : f.kind === 'check' ? f.output : f.reason;
  return t.length <= 2 * SCAN ? t : `${t.slice(0, SCAN)}\n${t.slice(-SCAN)}`;
}

const statusOf = (f: FailureInput): string | undefined => (f.kind === 'summary' ? undefined : f.status);

const textRule = (re: RegExp) => (f: FailureInput) => (f.kind === 'summary' ? undefined : re.exec(textOf(f))?.[0]);

const call = (content: string, more: Partial<Extract<FailureInput, { kind: 'call' }>> = {}): FailureInput => ({
  kind: 'call',
  tool: 'bash',
  outcome: 'failed',
  content,
  ...more,
});
const check = (output: string, exitCode: number | null = 1, status?: string): FailureInput => ({
  kind: 'check',
  command: 'npm test',
  exitCode,
  output,
  ...(status !== undefined ? { status } : {}),
});

const REASON_PHRASES = [
  'Too Many Requests',
  'Internal Server Error',
  'Bad Gateway',
  'Service Unavailable',
  'Gateway Time-?out',
  'Unauthorized',
  'Forbidden',
  'Proxy Authentication Required',
].join('|');

/** HTTP statuses in an unmistakably HTTP context: after HTTP/1.1 or `status`, or before a reason phrase. */
const httpStatus = (codes: string): RegExp =>
  new RegExp(
    String.raw`\bHTTP/\d(?:\.\d)?\s+(?:${codes})\b` +
      String.raw`|\b(?:HTTP status|status code|statusCode|status)["']?\s*[:=]?\s*(?:${codes})\b` +
      String.raw`|\breturned error:\s*(?:${codes})\b` +
      String.raw`|\b(?:${codes})\s+(?:${REASON_PHRASES})\b`,
    'i',
  );

const VALIDATION_STAGES = new Set(['schema', 'semantic', 'known', 'surface', 'plan']);

export const FAILURE_RULES: readonly FailureRule[] = [
  {
    name: 'sandbox-lost',
    class: 'unrecoverable',
    evidence: (f) => {
      if (statusOf(f) === 'lost') return 'status lost (the sandbox was lost)';
      return textRule(/\bsandbox (?:was |is )?lost\b/i)(f);
    },
    examples: {
      match: [call('', { status: 'lost', exitCode: null }), check('the sandbox was lost', null)],
      notMatch: [call('lost 3 packets', { status: 'failed', exitCode: 1 })],
    },
  },
  {
    name: 'gate-denied',
    class: 'permission',
    evidence: (f) => (f.kind === 'call' && f.outcome === 'denied' ? `outcome denied: ${f.content}` : undefined),
    examples: {
      match: [call('denied by deny[0] bash(git push*)', { outcome: 'denied' })],
      notMatch: [call('denied', { outcome: 'failed', exitCode: 1 })],
    },
  },
  {
    name: 'validation-rejected',
    class: 'invalid_input',
    evidence: (f) => {
      if (f.kind === 'summary') return `summary refused: ${f.reason}`;
      if (f.kind === 'call' && f.outcome === 'rejected' && (f.stage === undefined || VALIDATION_STAGES.has(f.stage)))
        return `rejected${f.stage ? ` at ${f.stage}` : ''}: ${f.content}`;
      if (statusOf(f) === 'rejected') return 'status rejected (the sandbox refused the request)';
      return undefined;
    },
    examples: {
      match: [
        call('path: expected a string', { outcome: 'rejected', stage: 'schema' }),
        { kind: 'summary', reason: 'cites obs-9, which does not exist' },
      ],
      notMatch: [call('Permission denied', { exitCode: 1 })],
    },
  },
  {
    name: 'timeout',
    class: 'transient',
    evidence: (f) => (statusOf(f) === 'timeout' ? 'status timeout' : undefined),
    examples: { match: [call('', { status: 'timeout', exitCode: null }), check('', null, 'timeout')], notMatch: [] },
  },
  {
    name: 'http-auth',
    class: 'permission',
    evidence: textRule(httpStatus('401|403|407')),
    examples: {
      match: [
        call('< HTTP/1.1 403 Forbidden'),
        call('curl: (22) The requested URL returned error: 401'),
        check('got 401 Unauthorized'),
      ],
      notMatch: [call('docs/403.md'), call('src/a.ts:401: const x = 1'), call('HTTP/1.1 200 OK, 403 bytes')],
    },
  },
  {
    name: 'os-permission',
    class: 'permission',
    evidence: textRule(
      /\bPermission denied\b|\bOperation not permitted\b|\bEACCES\b|\bEPERM\b|\bUnauthorized\b|\bForbidden\b/i,
    ),
    examples: {
      match: [
        call('bash: ./run.sh: Permission denied'),
        call("Error: EACCES: permission denied, open '/etc/x'"),
        call('403 Forbidden'),
      ],
      notMatch: [call('isUnauthorizedUser is not defined'), call('permissions.md not found')],
    },
  },
  {
    name: 'network',
    class: 'transient',
    evidence: textRule(
      /\b(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|EPIPE)\b|\bconnection (?:refused|reset(?: by peer)?|timed out)\b|\bnetwork is unreachable\b|\btemporary failure in name resolution\b/i,
    ),
    examples: {
      match: [
        call('connect ECONNREFUSED 127.0.0.1:5432'),
        call('curl: (7) Failed to connect to localhost port 8080: Connection refused'),
        check('Error: getaddrinfo EAI_AGAIN registry.npmjs.org'),
        call('ping: sendmsg: Network is unreachable'),
      ],
      notMatch: [call('src/net.ts:12: const RETRY_CONNECTIONS = 3'), call('connection pool size 10')],
    },
  },
  {
    name: 'http-transient',
    class: 'transient',
    evidence: textRule(httpStatus('429|5\\d\\d')),
    examples: {
      match: [
        call('< HTTP/1.1 503 Service Unavailable'),
        call('request failed with status 502'),
        check('429 Too Many Requests'),
        call('{"statusCode": 500}'),
        call('HTTP/2 504'),
      ],
      notMatch: [
        call('src/a.ts:500: return x'),
        call('wrote 503 bytes'),
        call('see docs/429.md'),
        call('HTTP/1.1 200 OK'),
        call('exit status 1; 500 tests passed'),
      ],
    },
  },
  {
    name: 'check-failed',
    class: 'logic',
    evidence: (f) =>
      f.kind === 'check' && f.exitCode !== null && f.exitCode !== 0
        ? `check \`${f.command}\` exited ${f.exitCode}`
        : undefined,
    examples: { match: [check('1 test failed', 1)], notMatch: [check('', null), check('', 0)] },
  },
  {
    name: 'call-exited',
    class: 'logic',
    evidence: (f) =>
      f.kind === 'call' && f.outcome === 'failed' && typeof f.exitCode === 'number' && f.exitCode !== 0
        ? `${f.tool} exited ${f.exitCode}`
        : undefined,
    examples: {
      match: [call('grep: no match', { exitCode: 2 })],
      notMatch: [call('internal error', { exitCode: null }), call('', { outcome: 'rejected', exitCode: 1 })],
    },
  },
];
