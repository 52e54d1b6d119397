import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_PATH } from '@gatehouse/shared';
import { setImageEnv } from '../src/image-env';
import { scrubbedEnv } from '../src/primitives/env';

describe('scrubbedEnv with a toolchain image’s environment', () => {
  afterEach(() => setImageEnv({}));

  it('starts from the image’s variables and PATH, the git wrapper first', () => {
    setImageEnv({ PATH: '/usr/local/go/bin:/usr/bin:/bin', GOPATH: '/go', PYTHONDONTWRITEBYTECODE: '1' });
    const env = scrubbedEnv();
    expect(env.PATH).toBe('/opt/gatehouse/bin:/usr/local/go/bin:/usr/bin:/bin');
    expect(env.GOPATH).toBe('/go');
    expect(env.PYTHONDONTWRITEBYTECODE).toBe('1');
    // The default PATH a caller passes (GIT_SAFE_ENV's) means "the sandbox's": the image's.
    expect(scrubbedEnv({ PATH: SANDBOX_PATH }).PATH).toBe('/opt/gatehouse/bin:/usr/local/go/bin:/usr/bin:/bin');
    expect(scrubbedEnv({ PATH: '/x' }).PATH).toBe('/opt/gatehouse/bin:/x');
  });

  it('keeps gatehouse’s fixed values over the image’s, and drops gatehouse’s and git’s names', () => {
    setImageEnv({
      HOME: '/root',
      TMPDIR: '/var/tmp',
      GIT_DIR: '/evil',
      GIT_CONFIG_COUNT: '1',
      GATEHOUSE_NATS_URL: 'nats://x',
      'BAD NAME': 'x',
      NUMBER: 3,
    });
    const env = scrubbedEnv();
    expect(env.HOME).toBe('/tmp');
    expect(env.TMPDIR).toBe('/tmp');
    expect(env.GIT_DIR).toBeUndefined();
    expect(env.GATEHOUSE_NATS_URL).toBeUndefined();
    expect(env['BAD NAME']).toBeUndefined();
    expect(env.NUMBER).toBeUndefined();
    expect(env.GIT_CONFIG_KEY_0).toBe('core.fsmonitor');
    expect(env.GIT_PAGER).toBe('cat');
  });

  it('never takes anything from the daemon’s own environment', () => {
    process.env.GATEHOUSE_SECRET_FOR_TEST = 'x';
    try {
      expect(scrubbedEnv().GATEHOUSE_SECRET_FOR_TEST).toBeUndefined();
    } finally {
      delete process.env.GATEHOUSE_SECRET_FOR_TEST;
    }
  });

  it('without an image environment, commands get the system PATH behind the wrapper', () => {
    expect(scrubbedEnv().PATH).toBe(SANDBOX_PATH);
  });
});
