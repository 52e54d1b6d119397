import { describe, expect, it } from 'vitest';
import { checkDeclaredVolumes } from '../../src/sandbox/image-volumes';

describe('checkDeclaredVolumes (a toolchain image’s VOLUMEs become writable scratch)', () => {
  it('lets the usual toolchain volumes through', () => {
    expect(() =>
      checkDeclaredVolumes('img', ['/var/lib/postgresql/data', '/home/node/.cache', '/data', '/opt/app', '/var/cache']),
    ).not.toThrow();
  });

  it('refuses system folders, anything inside them, and gatehouse’s own, naming them all', () => {
    for (const v of ['/etc', '/etc/ssl', '/usr/lib', '/lib64', '/root', '/opt/gatehouse/runtime', '/var/gatehouse'])
      expect(() => checkDeclaredVolumes('img', [v]), v).toThrow(`declares VOLUME ${v}:`);
    expect(() => checkDeclaredVolumes('img', ['/data', '/etc', '/usr'])).toThrow('declares VOLUME /etc, /usr:');
  });

  it('refuses a folder above the runtime, however it is spelled', () => {
    for (const v of ['/opt', '/opt/', '//opt', '/', 'opt', '/etc/../opt', '/usr/./'])
      expect(() => checkDeclaredVolumes('img', [v]), v).toThrow(/declares VOLUME/);
  });
});
