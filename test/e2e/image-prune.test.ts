import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tar from 'tar-fs';
import { describe, expect, it } from 'vitest';
import { docker, ensureImages, IMAGE_SOURCE_LABEL, pruneSuperseded } from '@gatehouse/orchestrator';

/**
 * Building images pruned every gatehouse image but the one just built, including those of other
 * checkouts and versions sharing the engine (found when one checkout's build removed the images
 * another was starting sandboxes from). Only the same checkout's superseded images go now.
 */
describe('pruning superseded images', () => {
  it("removes this checkout's older images only: another checkout's and unlabelled ones stay", async () => {
    const d = docker();
    const { sandbox: current } = await ensureImages({ prune: false });
    const run = `prunetest-${process.pid}-${Date.now()}`;
    const source = `/nonexistent/checkout-${run}`;
    const tags = { old: `gatehouse/sandbox:${run}-old`, keep: `gatehouse/sandbox:${run}-keep` };
    const other = `gatehouse/sandbox:${run}-other`;
    const unlabelled = `gatehouse/sandbox:${run}-unlabelled`;
    const made: string[] = [];
    const build = async (tag: string, labels: Record<string, string>, marker: string): Promise<void> => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-prune-'));
      // A distinct LABEL per image gives each its own id, as separate builds would have.
      writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${current}\nLABEL gatehouse.prunetest=${marker}\n`);
      const stream = await d.buildImage(tar.pack(dir) as unknown as NodeJS.ReadableStream, {
        t: tag,
        labels,
        rm: true,
      });
      await new Promise<void>((resolve, reject) =>
        d.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())),
      );
      rmSync(dir, { recursive: true, force: true });
      made.push(tag);
    };
    try {
      await build(tags.old, { [IMAGE_SOURCE_LABEL]: source }, 'old');
      await build(tags.keep, { [IMAGE_SOURCE_LABEL]: source }, 'keep');
      await build(other, { [IMAGE_SOURCE_LABEL]: `${source}-elsewhere` }, 'other');
      await build(unlabelled, {}, 'unlabelled');
      const removed = await pruneSuperseded(d, 'sandbox', tags.keep, source, () => undefined);
      expect(removed).toEqual([tags.old]);
      const left = async (tag: string): Promise<boolean> =>
        d
          .getImage(tag)
          .inspect()
          .then(
            () => true,
            () => false,
          );
      expect(await left(tags.old)).toBe(false);
      expect(await left(tags.keep)).toBe(true);
      expect(await left(other)).toBe(true);
      expect(await left(unlabelled)).toBe(true);
      expect(await left(current)).toBe(true);
    } finally {
      for (const tag of made)
        await d
          .getImage(tag)
          .remove()
          .catch(() => undefined);
    }
  });
});
