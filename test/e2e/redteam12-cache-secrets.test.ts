import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageFromWorkspace, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 12): a secret given to setup must not reach the agent through the dependency
 * cache. The content scan caught a token written into a file; a setup step (or a package's install
 * script it runs) could still carry it in a file's name, a symbolic link's target or an extended
 * attribute, all of which the cache image would hand to the agent's sandbox.
 */
describe('setup secrets and the cache image (red team)', () => {
  const d = new Docker();
  const secret = 'tok3n-Sup3rSecretValue-42';
  const forbidden = [{ name: 'NPM_TOKEN', value: secret }];
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  const made: string[] = [];
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_rt12cache', repoDir: makeRepo() });
  });
  afterAll(async () => {
    for (const tag of made)
      await d
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
    await driver?.close();
  });

  const save = async (dir: string) => {
    const tag = `gatehouse/setup-cache:rt12-${dir}`;
    made.push(tag);
    const baseImage = ((await sandbox.container.inspect()) as { Config: { Image: string } }).Config.Image;
    return imageFromWorkspace(d, sandbox.container, {
      baseImage,
      tag,
      keep: (rel) => rel === dir || rel.startsWith(`${dir}/`),
      forbidden,
    }).then(
      () => 'cached',
      (e: Error) => e.message,
    );
  };

  it('refuses a secret in a file name', async () => {
    await sh(sandbox, `mkdir -p byname && touch "byname/${secret}"`);
    expect(await save('byname')).toMatch(/NPM_TOKEN/);
  });

  it('refuses a secret in a symbolic link target', async () => {
    await sh(sandbox, `mkdir -p bylink && ln -s "${secret}" bylink/l`);
    expect(await save('bylink')).toMatch(/NPM_TOKEN/);
  });

  it('refuses a secret in an extended attribute', async () => {
    // setxattr(2) is syscall 188 on x86_64; perl is in the image, setfattr is not.
    const set = await sh(
      sandbox,
      `mkdir -p byxattr && echo x > byxattr/f && perl -e 'my ($p, $n, $v, $out) = ("byxattr/f", "user.t", ` +
        `"${secret}", " " x 64); syscall(188, $p, $n, $v, length $v, 0) == 0 or die "setxattr: $!"; ` +
        `my $got = syscall(191, $p, $n, $out, 64); print substr($out, 0, $got)'`,
    );
    expect(set).toContain(secret); // the sandbox's file system keeps it
    // Refused, or (Docker's archive carries only security.* attributes) cached without it.
    const outcome = await save('byxattr');
    if (outcome !== 'cached') return void expect(outcome).toMatch(/NPM_TOKEN/);
    const c = await d.createContainer({
      Image: 'gatehouse/setup-cache:rt12-byxattr',
      Cmd: ['true'],
      Labels: { 'gatehouse.role': 'test-redteam12' },
    });
    try {
      const tar = await c.getArchive({ path: '/workspace/byxattr/f' });
      const chunks: Buffer[] = [];
      for await (const chunk of tar) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).includes(secret)).toBe(false);
      expect(Buffer.concat(chunks).includes('x\n')).toBe(true);
    } finally {
      await c.remove({ force: true });
    }
  });

  it('refuses a secret in a large file across read boundaries; caches a large clean one', async () => {
    // 3 MiB of filler, the secret straddling the 1 MiB mark: it arrives in two chunks.
    await sh(
      sandbox,
      `mkdir -p big big2 && head -c 1048570 /dev/zero > big/f && printf "${secret}" >> big/f && ` +
        'head -c 2097152 /dev/zero >> big/f && head -c 3145728 /dev/zero > big2/f',
    );
    expect(await save('big')).toMatch(/NPM_TOKEN into big\/f/);
    expect(await save('big2')).toBe('cached');
  });

  it('still caches what carries no secret', async () => {
    await sh(sandbox, 'mkdir -p clean && echo ok > clean/f && ln -s f clean/l');
    expect(await save('clean')).toBe('cached');
  });
});
