import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_PATH } from '@gatehouse/shared';
import { addProxyEnv, setImageEnv } from '../src/image-env';
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

describe('the egress proxy settings for every command (GATEHOUSE_PROXY_ENV)', () => {
  afterEach(() => setImageEnv({}));

  it('adds the proxy variables the package managers read, on top of the image environment', () => {
    setImageEnv({ PATH: '/usr/local/bin:/usr/bin:/bin' });
    addProxyEnv(JSON.stringify({ HTTP_PROXY: 'http://gatehouse-egress:3128', npm_config_proxy: 'http://x:1' }));
    const env = scrubbedEnv();
    expect(env.HTTP_PROXY).toBe('http://gatehouse-egress:3128');
    expect(env.npm_config_proxy).toBe('http://x:1');
    expect(env.PATH).toContain('/usr/local/bin');
  });

  it('takes nothing else: not PATH, LD_PRELOAD, BASH_ENV or git settings', () => {
    addProxyEnv(
      JSON.stringify({
        PATH: '/evil',
        LD_PRELOAD: '/evil.so',
        BASH_ENV: '/evil.sh',
        GIT_CONFIG_COUNT: '9',
        HTTPS_PROXY: 'http://p:1',
      }),
    );
    const env = scrubbedEnv();
    expect(env.LD_PRELOAD).toBeUndefined();
    expect(env.BASH_ENV).toBeUndefined();
    expect(env.PATH).not.toContain('/evil');
    expect(env.HTTPS_PROXY).toBe('http://p:1');
    expect(Number(env.GIT_CONFIG_COUNT)).not.toBe(9);
  });

  it('absent is nothing; malformed stops the daemon with the reason', () => {
    addProxyEnv(undefined);
    expect(scrubbedEnv().HTTP_PROXY).toBeUndefined();
    expect(() => addProxyEnv('{not json')).toThrow(/GATEHOUSE_PROXY_ENV is not JSON/);
    expect(() => addProxyEnv('["HTTP_PROXY"]')).toThrow(/not an object/);
  });
});
