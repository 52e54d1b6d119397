import { describe, expect, it } from 'vitest';
import { isGitConfigFile, scrubGitCredentials } from '../../src/sandbox/git-config-scrub';

/** Red team (issue 12): credentials a user's .git/config holds must not be copied to the agent. */
describe('git config credentials are cut from the copy', () => {
  const config = [
    '[core]',
    '\trepositoryformatversion = 0',
    '\tbare = false',
    '[remote "origin"]',
    '\turl = https://x-access-token:ghs_tokenTOKEN123@github.example.com/o/r.git',
    '\tpushurl = https://alice:pa55word@git.example.com/o/r.git',
    '\tfetch = +refs/heads/*:refs/remotes/origin/*',
    '[remote "ssh"]',
    '\turl = git@github.example.com:o/r.git',
    '[http "https://github.example.com/"]',
    '\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3Rva2Vu',
    '[http]',
    '\tExtraHeader = Authorization: Bearer abc.def.ghi',
    '\tproxy = http://proxyuser:proxypass@proxy.example:3128',
    '[url "https://oauth2:glpat-SECRETSECRET@gitlab.example/"]',
    '\tinsteadOf = https://gitlab.example/',
    '[sendemail]',
    '\tsmtppass = smtp-secret',
    '[http "https://other/"] extraheader = inline-secret',
    '[branch "main"]',
    '\tremote = origin',
    '',
  ].join('\n');

  it('cuts user info from every URL and drops header and password keys, keeping the rest', () => {
    const out = scrubGitCredentials(config);
    for (const secret of [
      'ghs_tokenTOKEN123',
      'pa55word',
      'eC1hY2Nlc3MtdG9rZW46Z2hzX3Rva2Vu',
      'abc.def.ghi',
      'proxypass',
      'glpat-SECRETSECRET',
      'smtp-secret',
      'inline-secret',
    ])
      expect(out).not.toContain(secret);
    expect(out).toContain('\turl = https://github.example.com/o/r.git');
    expect(out).toContain('\turl = git@github.example.com:o/r.git');
    expect(out).toContain('\tproxy = http://proxy.example:3128');
    expect(out).toContain('[url "https://gitlab.example/"]');
    expect(out).toContain('[http "https://other/"]');
    expect(out).toContain('\tfetch = +refs/heads/*:refs/remotes/origin/*');
    expect(out).toContain('[branch "main"]\n\tremote = origin');
    expect(out.split('\n')).toHaveLength(config.split('\n').length);
  });

  it.each([
    ['.git/config', true],
    ['.git/config.worktree', true],
    ['vendor/lib/.git/config', true],
    ['.git/modules/sub/config', true],
    ['.git/worktrees/wt/config.worktree', true],
    ['config', false],
    ['.git/configs/x', false],
    ['src/.git-config', false],
  ])('%s is a git config: %s', (rel, expected) => {
    expect(isGitConfigFile(rel)).toBe(expected);
  });
});
