import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { legacyRunsNotice } from '../../src/cli/legacy-notice';
import { LogKey } from '../../src/events/key';
import {
  currentGroup,
  defaultStateRoot,
  groupName,
  listGroups,
  realRepoPath,
  StateDirError,
  stateDirForRun,
} from '../../src/events/state-home';
import { fakeRun, tempDir } from './fake-runs';

// Every environment here is injected: nothing reads or writes the real home directory.
describe("the user's state directory, by repository", () => {
  it('is $XDG_STATE_HOME/gatehouse, else $HOME/.local/state/gatehouse', () => {
    expect(defaultStateRoot({ XDG_STATE_HOME: '/x/state', HOME: '/h' })).toBe('/x/state/gatehouse');
    expect(defaultStateRoot({ HOME: '/h' })).toBe('/h/.local/state/gatehouse');
    expect(defaultStateRoot({ XDG_STATE_HOME: '', HOME: '/h' })).toBe('/h/.local/state/gatehouse');
  });

  it('keeps the log key and heads out of it: the defaults do, a key moved inside is refused', () => {
    const home = { HOME: '/h', XDG_CONFIG_HOME: '/h/.config' };
    expect(() => defaultStateRoot(home)).not.toThrow();
    const root = defaultStateRoot(home);
    // The check LogKey.load makes for every state directory, on a group of the default root.
    const key = '/h/.config/gatehouse/log.key';
    expect(path.relative(root, key).startsWith('..')).toBe(true);
    expect(() => defaultStateRoot({ ...home, XDG_STATE_HOME: '/h/.config' })).toThrow(StateDirError);
    expect(() => defaultStateRoot({ ...home, GATEHOUSE_KEY_FILE: `${root}/k/log.key` })).toThrow(
      /the log key .* is inside the state directory/,
    );
    expect(() => defaultStateRoot({ ...home, GATEHOUSE_HEADS_DIR: `${root}/heads` })).toThrow(/heads directory/);
  });

  it("a new run is written to its repository's group, which records the repository; an explicit dir wins", () => {
    const home = tempDir('gh-home-');
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    const repo = realRepoPath(tempDir('gh-repo-'));
    const link = path.join(tempDir('gh-links-'), 'via-link');
    symlinkSync(repo, link);
    const group = stateDirForRun(repo, { env });
    expect(group).toBe(path.join(home, '.local/state/gatehouse/repos', groupName(repo)));
    expect(groupName(repo)).toMatch(new RegExp(`^${path.basename(repo)}-[0-9a-f]{12}$`));
    expect(JSON.parse(readFileSync(path.join(group, 'repo.json'), 'utf8'))).toMatchObject({ repo });
    // Through a symbolic link it is the same repository, so the same group.
    expect(stateDirForRun(link, { env })).toBe(group);
    expect(listGroups(path.join(home, '.local/state/gatehouse'))).toEqual([{ dir: group, repo }]);
    expect(currentGroup(path.join(home, '.local/state/gatehouse'), repo)).toEqual({ dir: group, repo });
    expect(stateDirForRun(repo, { env, flag: 'here', cwd: '/w' })).toBe('/w/here');
    expect(stateDirForRun(repo, { env: { ...env, GATEHOUSE_STATE_DIR: '/env' } })).toBe('/env');
    // The key check the run's log makes passes on the group (the key lives under XDG_CONFIG_HOME).
    expect(() => LogKey.load({ env: { ...env, GATEHOUSE_KEY_FILE: '' }, stateDir: group, create: true })).not.toThrow();
  });

  it('says once where runs live now when ./.gatehouse/runs holds runs of the older layout', () => {
    const home = tempDir('gh-home-');
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    const repo = tempDir('gh-repo-');
    expect(legacyRunsNotice(repo, { env })).toBeUndefined();
    mkdirSync(path.join(repo, '.gatehouse'));
    expect(legacyRunsNotice(repo, { env })).toBeUndefined(); // only configuration there
    fakeRun(path.join(repo, '.gatehouse'), 'run_old', { startedAt: '2024-01-01T00:00:00.000Z' });
    expect(legacyRunsNotice(repo, { env, stateDir: '.gatehouse' })).toBeUndefined(); // reading them already
    const notice = legacyRunsNotice(repo, { env });
    expect(notice).toContain(path.join(home, '.local/state/gatehouse/repos'));
    expect(notice).toContain('--state-dir .gatehouse');
    expect(legacyRunsNotice(repo, { env })).toBeUndefined(); // once
    expect(existsSync(path.join(repo, '.gatehouse/runs/run_old/events.jsonl'))).toBe(true); // not moved
  });
});
