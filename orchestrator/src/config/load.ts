import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import { ConfigError, ConfigRefusedError } from './errors';
import { imageProblem } from './image-ref';
import { narrowByRepository } from './narrow';
import type { FileProblem } from '../problems/file-problems';
import { readConfigFile, type ConfigFileRead } from './read-config';
import type { ResolvedConfig } from './types';
import { trustedValues } from './values';

/** Where a repository keeps its own config when --config is not given (and even when it is). */
export const DEFAULT_CONFIG_PATH = path.join('.gatehouse', 'config.json');

export interface LoadProjectConfigOptions {
  repoDir: string;
  /** `--config FILE`: trusted whole. */
  configFile?: string;
  /** `--image IMAGE`: a flag is trusted; it wins over every config's image. */
  image?: string;
  /**
   * `--check CMD`: trusted like --image; it wins over every config's check, and a repository's own
   * check that differs from it is listed as ignored.
   */
  check?: string;
}

/**
 * The configuration a run uses. `--config FILE` is trusted whole; without it the defaults are.
 * The repository's `.gatehouse/config.json`, if it has one, can then only narrow that (narrow.ts).
 * Both files are read and checked in full before anything fails, so every problem in either is
 * reported at once (ConfigError, a usage error). A repository config reached through a symbolic
 * link is refused (ConfigRefusedError): it could be anyone's file.
 */
export function loadProjectConfig(opts: LoadProjectConfigOptions): ResolvedConfig {
  const problems: FileProblem[] = [];
  if (opts.image !== undefined) {
    const p = imageProblem(opts.image);
    if (p) problems.push({ file: '--image', path: '', message: `${p}, got ${JSON.stringify(opts.image)}` });
  }
  const checkFlag = opts.check?.trim();
  if (checkFlag === '') problems.push({ file: '--check', path: '', message: 'a command line cannot be empty' });
  const trustedFile = opts.configFile === undefined ? undefined : path.resolve(opts.configFile);
  const trusted = trustedFile === undefined ? undefined : readConfigFile(trustedFile);
  const repoFile = repositoryConfig(opts.repoDir);
  // `--config REPO/.gatehouse/config.json` trusts the repository's file: it is not read again as untrusted.
  const repo =
    repoFile === undefined || sameFile(repoFile, trustedFile) ? undefined : readConfigFile(repoFile, opts.repoDir);
  problems.push(...(trusted?.problems ?? []), ...(repo?.problems ?? []));
  if (problems.length > 0) throw new ConfigError(problems);

  const base = { ...trustedValues(trusted, opts.image), ...(checkFlag ? { check: checkFlag } : {}) };
  const { values, ignored } = repo ? narrowByRepository(base, repo) : { values: base, ignored: [] };
  return {
    source: sourceOf(trusted, repo),
    ...values,
    ignored,
    sha256: sha256Hex(
      canonicalJson({
        trusted: trusted?.raw ?? null,
        repository: repo?.raw ?? null,
        image: opts.image ?? null,
        // Only when given, so the hash of a run without the flag stays what it was.
        ...(checkFlag ? { check: checkFlag } : {}),
      }),
    ),
  };
}

/** The repository's config file, if there is one; refused if it or its folder is a symbolic link. */
function repositoryConfig(repoDir: string): string | undefined {
  const file = path.join(path.resolve(repoDir), DEFAULT_CONFIG_PATH);
  for (const p of [path.dirname(file), file]) {
    let link: boolean;
    try {
      link = lstatSync(p).isSymbolicLink();
    } catch {
      return undefined;
    }
    if (link)
      throw new ConfigRefusedError(
        `${path.relative(repoDir, p)} is a symbolic link; a repository's config must be a plain file inside it ` +
          '(or pass --config FILE to choose a config yourself)',
      );
  }
  return file;
}

function sameFile(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

function sourceOf(trusted: ConfigFileRead | undefined, repo: ConfigFileRead | undefined): string {
  if (trusted && repo) return `${trusted.file} narrowed by ${repo.file}`;
  if (trusted) return trusted.file;
  if (repo) return `${repo.file} (from the repository: narrowing the defaults)`;
  return 'defaults';
}
