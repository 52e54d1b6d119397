import { existsSync } from 'node:fs';
import path from 'node:path';
import { installationKey } from '../events/installation';
import { keyLocation } from '../events/key';
import { DOCKER_START, dockerHost, imageExists } from '../sandbox/docker';
import { installKind, packageVersion, projectRoot } from '../sandbox/paths';
import { findOnPath } from '../sandbox/runtime-image';
import {
  assertDockerReachable,
  connectOrchestrator,
  ensureImages,
  ensureNatsServer,
  expectedImageTags,
} from '../sandbox/index';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/**
 * Checks what a run needs, in order, each with how to fix it. Read-only except that it starts the
 * NATS container when the images are there (that is what a run would do anyway).
 */
export async function doctor(json: boolean): Promise<number> {
  const checks: Check[] = [];
  const add = (c: Check): void => {
    checks.push(c);
    if (!json)
      process.stderr.write(
        `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}${c.ok || !c.fix ? '' : `\n     fix: ${c.fix}`}\n`,
      );
  };

  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  add({
    name: 'node',
    ok: major > 20 || (major === 20 && minor >= 19),
    detail: process.versions.node,
    fix: 'install Node >= 20.19',
  });

  // A checkout rebuilds what is missing from its sources; an installed package ships it all, so only
  // reinstalling brings back a missing file.
  const root = projectRoot();
  const kind = installKind(root);
  add({ name: 'gatehouse', ok: true, detail: `${packageVersion(root)} (${kind} at ${root})` });
  const daemonBundle = path.join(root, 'images', 'sandbox', 'build', 'daemon.cjs');
  add({
    name: 'daemon bundle',
    ok: existsSync(daemonBundle),
    detail: daemonBundle,
    fix: kind === 'checkout' ? 'npm run build' : 'reinstall gatehouse: npm install -g gatehouse-cli (or the tarball)',
  });

  // Every sandbox carries the host's git (and node): the runtime image is assembled from them.
  const git = onPath('git');
  add({
    name: 'git',
    ok: git !== undefined,
    detail: git ?? 'not on the PATH (the sandbox runtime carries the host git)',
    fix: 'install git (Debian: apt-get install -y git)',
  });

  // The event log's anchor: a key file that exists must be safe to use (doctor never creates it).
  try {
    const key = installationKey();
    const where = keyLocation();
    add({
      name: 'log key',
      ok: true,
      detail: key
        ? `${where.keyFile} (id ${key.id}), heads in ${where.headsDir}`
        : `none yet; created on first run at ${where.keyFile}`,
    });
  } catch (e) {
    add({ name: 'log key', ok: false, detail: (e as Error).message });
  }

  let dockerOk = false;
  try {
    const v = await assertDockerReachable();
    dockerOk = true;
    add({ name: 'docker engine', ok: true, detail: `${v.version} (API ${v.apiVersion}) at ${dockerHost().url}` });
  } catch (e) {
    add({
      name: 'docker engine',
      ok: false,
      detail: (e as Error).message,
      fix: DOCKER_START[kind],
    });
  }

  if (dockerOk && git) {
    const expected = await expectedImageTags();
    let imagesOk = true;
    for (const [kind, { tags }] of Object.entries(expected)) {
      const exists = await Promise.all(tags.map((t) => imageExists(t)));
      const present = tags.filter((_, i) => exists[i]);
      imagesOk &&= present.length > 0;
      add({
        name: `${kind} image`,
        ok: present.length > 0,
        detail: present.length > 0 ? present.join(', ') : `missing (${tags.join(' or ')})`,
        fix: `gatehouse images build (or just run: the first run builds what is missing, once)${IMAGE_BUILD_NOTE}`,
      });
    }
    if (!imagesOk) add(patchelfCheck());
    if (imagesOk) {
      try {
        const images = await ensureImages();
        const nats = await ensureNatsServer(images.nats);
        const nc = await connectOrchestrator(nats.url, nats.identity);
        const rtt = await nc.rtt();
        await nc.close();
        add({
          name: 'nats',
          ok: true,
          detail: `${nats.embedded ? 'embedded container' : 'external'} at ${nats.url}, round trip ${rtt} ms`,
        });
      } catch (e) {
        add({
          name: 'nats',
          ok: false,
          detail: (e as Error).message,
          fix: 'unset NATS_URL to use the embedded server, or check `docker logs gatehouse-nats`',
        });
      }
    }
  }

  for (const [name, variable] of [
    ['openai key', 'OPENAI_API_KEY'],
    ['anthropic key', 'ANTHROPIC_API_KEY'],
  ] as const) {
    // Keys are optional (the scripted model needs none); report presence, never the value.
    add({
      name,
      ok: true,
      detail: process.env[variable] ? `${variable} is set` : `${variable} not set (only needed for that provider)`,
    });
  }

  const ok = checks.every((c) => c.ok);
  if (!json && !ok)
    process.stderr.write(`gatehouse ${packageVersion(root)}: fix the checks marked FAIL, then run again\n`);
  if (json) process.stdout.write(`${JSON.stringify({ ok, checks })}\n`);
  return ok ? 0 : 1;
}

const IMAGE_BUILD_NOTE =
  '; it builds from node:20-bookworm-slim, python:3.12-slim and debian:bookworm-slim where a registry answers, ' +
  'else from Debian bases made with debootstrap (as root, a few minutes)';

/** Building the sandbox runtime patches the host's node and git with patchelf (assemble-runtime.sh). */
function patchelfCheck(): Check {
  const patchelf = onPath('patchelf');
  const installsIt = process.getuid?.() === 0 && onPath('apt-get') !== undefined;
  return {
    name: 'patchelf',
    ok: patchelf !== undefined || installsIt,
    detail: patchelf ?? (installsIt ? 'missing; the image build installs it with apt-get' : 'missing'),
    fix: 'apt-get install -y patchelf (as root), then gatehouse images build',
  };
}

function onPath(program: string): string | undefined {
  try {
    return findOnPath(program);
  } catch {
    return undefined;
  }
}
