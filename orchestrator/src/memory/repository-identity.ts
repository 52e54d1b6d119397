import { createHash } from 'node:crypto';
import { realRepoPath } from '../events/state-home';
import { hostGit } from '../sandbox/host-git';
import { ownGitDir } from './own-git-dir';

/**
 * What a repository record is bound to (docs/memory.md, "Repository identity"). A git repository
 * with commits is its root commits (every parentless commit reachable from HEAD) together with its
 * `origin` remote, normalised: two clones of one project share their records, a fork (other remote)
 * or an unrelated history does not. A directory without commits is its real path, so a copy of it
 * elsewhere is another repository. The identity is what the repository says of itself, not a proof:
 * a repository that copies another's root commit and remote URL is taken for it. But its git
 * directory must be its own (own-git-dir.ts): a `.git` file or link that borrows another
 * repository's history, without knowing it, makes the identity the path's.
 */
export interface RepositoryIdentity {
  /** `git-<24 hex>` or `path-<24 hex>`: what records store and match. */
  id: string;
  kind: 'git' | 'path';
  /** For people: the root commits and the remote (git), or the path. */
  describe: string;
}

export async function repositoryIdentity(repoDir: string): Promise<RepositoryIdentity> {
  const real = realRepoPath(repoDir);
  const gitDir = ownGitDir(real);
  const git = gitDir !== undefined ? await gitFacts(real, gitDir) : undefined;
  if (git && git.roots.length > 0) {
    const text = `gatehouse repository v1\nroots ${git.roots.join(',')}\nremote ${git.remote}`;
    return {
      id: `git-${digest(text)}`,
      kind: 'git',
      describe: `root ${git.roots.map((r) => r.slice(0, 12)).join(',')}, remote ${git.remote || '(none)'}`,
    };
  }
  return { id: `path-${digest(`gatehouse repository v1\npath ${real}`)}`, kind: 'path', describe: real };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

async function gitFacts(workTree: string, gitDir: string): Promise<{ roots: string[]; remote: string } | undefined> {
  // hostGit: the repository may be hostile; its config names no program git would run here.
  const run = async (args: string[]): Promise<string | undefined> => {
    try {
      // The git directory checked above, named: git does not read the `.git` file again.
      return (await hostGit(args, { workTree, gitDir, timeoutMs: 20_000, maxBytes: 1024 * 1024 })).toString('utf8');
    } catch {
      return undefined;
    }
  };
  const roots = await run(['rev-list', '--max-parents=0', 'HEAD']);
  if (roots === undefined) return undefined;
  const remote = (await run(['config', '--get', 'remote.origin.url'])) ?? '';
  return {
    roots: roots
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^[0-9a-f]{40,64}$/.test(l))
      .sort(),
    remote: normaliseRemote(remote.trim()),
  };
}

/**
 * One spelling per remote: `git@github.com:o/r.git`, `https://user:token@GitHub.com/o/r/` and
 * `ssh://git@github.com/o/r` are all `github.com/o/r`. Credentials never reach the identity.
 */
export function normaliseRemote(url: string): string {
  if (url === '') return '';
  let rest = url;
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.*)$/.exec(rest);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) rest = `${scp[1]}/${scp[2]}`;
  else rest = rest.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^[^@/]*@/, '');
  const slash = rest.indexOf('/');
  const host = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase().replace(/:(22|80|443)$/, '');
  const repoPath = slash < 0 ? '' : rest.slice(slash);
  return `${host}${repoPath}`.replace(/\/+$/, '').replace(/\.git$/, '');
}
