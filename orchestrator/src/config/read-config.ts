import { lstatSync, readFileSync, statSync } from 'node:fs';
import { MAX_SETTINGS_FILE_BYTES, PlainFileError, readPlainFile } from '../files/read-plain-file';
import path from 'node:path';
import { policyRules } from '../policy/policy-rules';
import { parseJsonText } from '../problems/json-text';
import { problemsFromIssues, type FileProblem } from '../problems/file-problems';
import { isMcpSecretPath } from './mcp-schema';
import { ProjectConfigFile } from './schema';

/** One config file as read: its JSON (hashed for the record), its settings if valid, every problem. */
export interface ConfigFileRead {
  file: string;
  raw: unknown;
  config?: ProjectConfigFile;
  /** A `policy` path, resolved against the file's folder. */
  policyFile?: string;
  problems: FileProblem[];
}

/**
 * Reads and checks one config file, collecting every problem rather than stopping at the first.
 * `repoDir` marks an untrusted file (the repository's own, or one a caller gave the MCP server): it
 * must be a small regular file (a FIFO would stall the read), and its policy path must stay inside
 * the repository and reach its file through no symbolic link.
 */
export function readConfigFile(file: string, repoDir?: string): ConfigFileRead {
  const problems: FileProblem[] = [];
  const problem = (p: Omit<FileProblem, 'file'>): ConfigFileRead => ({
    file,
    raw: undefined,
    problems: [{ file, ...p }],
  });
  let text: string;
  try {
    text =
      repoDir === undefined
        ? readFileSync(file, 'utf8')
        : readPlainFile(file, MAX_SETTINGS_FILE_BYTES).toString('utf8');
  } catch (e) {
    if (e instanceof PlainFileError) return problem({ path: '', message: `cannot read the config file: it ${e.why}` });
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : (e as Error).message;
    return problem({ path: '', message: `cannot read the config file: ${why}` });
  }
  const json = parseJsonText(text.replace(/^\uFEFF/, ''));
  if (!json.ok)
    return problem({ path: '', line: json.line, column: json.column, message: `not valid JSON: ${json.message}` });
  for (const d of json.duplicates)
    problems.push({ file, path: d.path, line: d.line, column: d.column, message: 'this key is given twice' });
  const parsed = ProjectConfigFile.safeParse(json.value);
  if (!parsed.success)
    problems.push(...problemsFromIssues(parsed.error.issues, json.value, ProjectConfigFile, file).map(withoutSecret));
  const policy = (json.value as { policy?: unknown } | null)?.policy;
  let policyFile: string | undefined;
  if (typeof policy === 'object' && policy !== null && !Array.isArray(policy))
    problems.push(...policyProblems(policy, file));
  else if (typeof policy === 'string' && policy !== '') {
    policyFile = path.resolve(path.dirname(file), policy);
    const p = repoDir === undefined ? trustedPolicyFileProblem(policyFile) : repoPolicyFileProblem(policyFile, repoDir);
    if (p) problems.push({ file, path: 'policy', message: p });
  }
  return {
    file,
    raw: json.value,
    ...(parsed.success && problems.length === 0 ? { config: parsed.data } : {}),
    ...(policyFile ? { policyFile } : {}),
    problems,
  };
}

/** An inline policy: the policy file's schema, each rule's syntax and tool (its examples: when it is compiled). */
function policyProblems(policy: object, file: string): FileProblem[] {
  return policyRules(policy, file, { prefix: ['policy'] }).problems;
}

function trustedPolicyFileProblem(full: string): string | undefined {
  try {
    return statSync(full).isFile() ? undefined : `${full} is not a file`;
  } catch {
    return `no such policy file ${full}`;
  }
}

/** A repository's config names a policy inside the repository, reached through no symbolic link. */
function repoPolicyFileProblem(full: string, repoDir: string): string | undefined {
  const rel = path.relative(repoDir, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel))
    return `a repository's config can only name a policy file inside the repository, not ${full}`;
  let at = repoDir;
  for (const part of rel.split(path.sep)) {
    at = path.join(at, part);
    try {
      if (lstatSync(at).isSymbolicLink())
        return `${path.relative(repoDir, at)} is a symbolic link; a repository's policy must be a plain file`;
    } catch {
      return `no such policy file ${rel} in the repository`;
    }
  }
  return statSync(full).isFile() ? undefined : `${rel} is not a file`;
}

/** A problem at an MCP server's env, headers or URL names the place, never the value (it may be a credential). */
function withoutSecret(p: FileProblem): FileProblem {
  if (!isMcpSecretPath(p.path) || !/, got /.test(p.message)) return p;
  return { ...p, message: `${p.message.replace(/, got [\s\S]*$/, '')} (the value is not shown)` };
}
