import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DockerHostSyntaxError,
  dockerHostFromEnv,
  dockerOptions,
  hostPort,
  parseDockerHost,
  publishAddress,
} from '../../src/sandbox/docker-host';
import { DockerUnavailableError } from '../../src/sandbox/errors';

describe('Docker host URLs (--docker-host, DOCKER_HOST)', () => {
  it('reads unix, tcp (TLS by DOCKER_TLS_VERIFY or port 2376) and ssh URLs', () => {
    expect(parseDockerHost('unix:///run/other.sock', {})).toMatchObject({
      kind: 'unix',
      socketPath: '/run/other.sock',
    });
    expect(parseDockerHost('tcp://10.213.0.2:2376', {})).toMatchObject({
      kind: 'tcp',
      address: '10.213.0.2',
      port: 2376,
      tls: true,
    });
    expect(parseDockerHost('tcp://build-2:2375', {})).toMatchObject({ address: 'build-2', port: 2375, tls: false });
    expect(parseDockerHost('tcp://build-2:4243', { DOCKER_TLS_VERIFY: '1' })).toMatchObject({ port: 4243, tls: true });
    expect(parseDockerHost('tcp://build-2', { DOCKER_TLS_VERIFY: '1' })).toMatchObject({ port: 2376, tls: true });
    expect(parseDockerHost('tcp://[fd00::2]:2376', {})).toMatchObject({ address: 'fd00::2' });
    expect(parseDockerHost('ssh://ops@build-2', {})).toMatchObject({
      kind: 'ssh',
      address: 'build-2',
      port: 22,
      username: 'ops',
    });
  });

  it('refuses what is not a Docker host, saying which forms are', () => {
    for (const bad of [
      'garbage',
      'http://build-2:2375',
      'unix://relative.sock',
      'tcp://',
      'tcp://build-2:2376/path',
      'tcp://user@build-2:2376',
      'ssh://ops:secret@build-2',
      'tcp://build-2:99999',
    ]) {
      expect(() => parseDockerHost(bad, {}), bad).toThrow(DockerHostSyntaxError);
      expect(() => parseDockerHost(bad, {}), bad).toThrow(/unix:\/\/\/path\/to\/docker.sock, tcp:\/\/HOST:PORT/);
    }
  });

  it('a bad DOCKER_HOST is an environment error naming the variable; none means the local socket', () => {
    expect(() => dockerHostFromEnv({ DOCKER_HOST: 'nonsense' })).toThrow(DockerUnavailableError);
    expect(() => dockerHostFromEnv({ DOCKER_HOST: 'nonsense' })).toThrow(/^DOCKER_HOST: "nonsense"/);
    expect(dockerHostFromEnv({})).toMatchObject({ kind: 'unix', socketPath: '/var/run/docker.sock' });
  });

  it('TLS reads the client certificate from DOCKER_CERT_PATH, and says which file is missing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-certs-'));
    for (const f of ['ca.pem', 'cert.pem']) writeFileSync(path.join(dir, f), f);
    const host = parseDockerHost('tcp://10.213.0.2:2376', {});
    expect(() => dockerOptions(host, { DOCKER_CERT_PATH: dir })).toThrow(new RegExp(`${dir}/key.pem cannot be read`));
    writeFileSync(path.join(dir, 'key.pem'), 'key');
    const o = dockerOptions(host, { DOCKER_CERT_PATH: dir });
    expect(o).toMatchObject({ protocol: 'https', host: '10.213.0.2', port: 2376 });
    expect((o.key as Buffer).toString('utf8')).toBe('key');
    // ssh:// needs the host's key in known_hosts (ssh-known-hosts.test.ts): given here.
    const known = path.join(dir, 'known_hosts');
    writeFileSync(known, `[b]:2222 ssh-ed25519 ${Buffer.from('a host key').toString('base64')}\n`);
    const ssh = { SSH_AUTH_SOCK: '/a', GATEHOUSE_SSH_KNOWN_HOSTS: known };
    expect(dockerOptions(parseDockerHost('ssh://ops@b:2222', {}), ssh)).toMatchObject({
      protocol: 'ssh',
      host: 'b',
      port: 2222,
      username: 'ops',
    });
  });

  it('published ports: loopback on the local engine, the engine address on another host', () => {
    expect(publishAddress(dockerHostFromEnv({}))).toEqual({ bindIp: '127.0.0.1', connectHost: '127.0.0.1' });
    expect(publishAddress(parseDockerHost('tcp://127.0.0.1:2375', {}))).toEqual({
      bindIp: '127.0.0.1',
      connectHost: '127.0.0.1',
    });
    expect(publishAddress(parseDockerHost('tcp://10.213.0.2:2376', {}))).toEqual({
      bindIp: '10.213.0.2',
      connectHost: '10.213.0.2',
    });
    expect(publishAddress(parseDockerHost('ssh://build-2', {}))).toEqual({ bindIp: '0.0.0.0', connectHost: 'build-2' });
    expect(hostPort('fd00::2', 4222)).toBe('[fd00::2]:4222');
    expect(hostPort('10.0.0.1', 4222)).toBe('10.0.0.1:4222');
  });
});
