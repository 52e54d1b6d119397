import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors';
import { loadProjectConfig } from '../../src/config/load';
import { repoWith, trustedFile } from './helpers';

describe('--check over the configs', () => {
  it('the flag is trusted: it wins over the trusted config’s check', () => {
    const c = loadProjectConfig({
      repoDir: repoWith(),
      configFile: trustedFile({ check: 'make test' }),
      check: 'npm test',
    });
    expect(c.check).toBe('npm test');
    expect(c.ignored).toEqual([]);
  });

  it("a repository's different check is not taken over the flag, and is said to be ignored", () => {
    const c = loadProjectConfig({ repoDir: repoWith({ check: 'true' }), check: '  npm test ' });
    expect(c.check).toBe('npm test');
    expect(c.ignored).toEqual(['check "true"']);
  });

  it("without the flag, a repository's check applies where nothing trusted sets one", () => {
    expect(loadProjectConfig({ repoDir: repoWith({ check: 'npm test' }) }).check).toBe('npm test');
    expect(loadProjectConfig({ repoDir: repoWith() }).check).toBeUndefined();
  });

  it('an empty flag is a usage error, listed with the config files’ problems', () => {
    const load = () => loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile({ imgae: 'x' }), check: '  ' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/--check: a command line cannot be empty/);
    expect(load).toThrow(/imgae: unknown key/);
  });

  it('the config hash changes with the flag, and only when it is given', () => {
    const repo = repoWith();
    const without = loadProjectConfig({ repoDir: repo }).sha256;
    expect(loadProjectConfig({ repoDir: repo }).sha256).toBe(without);
    expect(loadProjectConfig({ repoDir: repo, check: 'npm test' }).sha256).not.toBe(without);
  });
});
