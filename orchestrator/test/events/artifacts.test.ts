import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@gatehouse/shared';
import { ArtifactError, ArtifactStore, type ArtifactPage } from '../../src/events/index';
import { tempStateDir } from './helpers';

const store = () => new ArtifactStore(path.join(tempStateDir(), 'artifacts'));

function pageAll(s: ArtifactStore, ref: string, limit: number): ArtifactPage[] {
  const pages: ArtifactPage[] = [];
  let offset = 0;
  for (;;) {
    const p = s.read(ref, offset, limit);
    pages.push(p);
    if (p.eof) return pages;
    expect(p.bytes).toBeGreaterThan(0);
    offset = p.offset + p.bytes;
  }
}

const mixed = 'ascii, é ü ß, 中文字符測試, emoji 🎉👍🏽🧑‍💻, and \u{10FFFF}.\n'.repeat(7);

describe('ArtifactStore', () => {
  it('round-trips content under a content-addressed ref, atomically, once', () => {
    const s = store();
    const a = s.put(mixed);
    const bytes = Buffer.from(mixed);
    expect(a).toEqual({ ref: `art-${sha256Hex(bytes).slice(0, 16)}`, bytes: bytes.length, sha256: sha256Hex(bytes) });
    expect(s.put(Buffer.from(mixed))).toEqual(a); // same content, same ref
    expect(readdirSync(s.dir)).toEqual([a.ref]); // no temporary files left behind
    expect(readFileSync(path.join(s.dir, a.ref)).equals(bytes)).toBe(true);
    expect(s.read(a.ref)).toEqual({
      ref: a.ref,
      offset: 0,
      bytes: bytes.length,
      totalBytes: bytes.length,
      text: mixed,
      eof: true,
    });
    expect(s.has(a.ref)).toBe(true);
    expect(s.put('').bytes).toBe(0);
    s.sync();
  });

  it('pages cover the whole content exactly once and never split a character, for every limit', () => {
    const s = store();
    const { ref } = s.put(mixed);
    const total = Buffer.byteLength(mixed);
    for (let limit = 1; limit <= 70; limit++) {
      const pages = pageAll(s, ref, limit);
      expect(pages.map((p) => p.text).join('')).toBe(mixed);
      expect(pages.reduce((n, p) => n + p.bytes, 0)).toBe(total);
      for (const p of pages) {
        expect(p.text).not.toContain('\uFFFD');
        expect(Buffer.byteLength(p.text)).toBe(p.bytes);
        expect(p.bytes).toBeLessThanOrEqual(Math.max(limit, 4)); // over the limit only for one character longer than it
      }
    }
  });

  it('moves an offset inside a character back to its first byte', () => {
    const s = store();
    const { ref } = s.put('a🎉b'); // 🎉 is bytes 1..4
    for (const off of [1, 2, 3, 4])
      expect(s.read(ref, off, 100)).toMatchObject({ offset: 1, bytes: 5, text: '🎉b', eof: true });
    expect(s.read(ref, 5, 100)).toMatchObject({ offset: 5, text: 'b' });
    // End inside 🎉: stop before it.
    expect(s.read(ref, 0, 3)).toMatchObject({ offset: 0, bytes: 1, text: 'a', eof: false });
    // Limit smaller than the character.
    expect(s.read(ref, 1, 2)).toMatchObject({ offset: 1, bytes: 4, text: '🎉', eof: false });
    expect(s.read(ref, 99)).toMatchObject({ offset: 6, bytes: 0, text: '', eof: true, totalBytes: 6 });
  });

  it('stores binary content byte for byte', () => {
    const s = store();
    const bin = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256));
    const a = s.put(bin);
    expect(readFileSync(path.join(s.dir, a.ref)).equals(bin)).toBe(true);
  });

  it.each([
    '../x',
    'art-zz',
    'art-0123456789ABCDEF',
    'art-0123456789abcdef/../../etc',
    '/etc/passwd',
    '',
    'art-0123456789abcde',
  ])('refuses the bad ref %j', (ref) => {
    const s = store();
    expect(() => s.read(ref)).toThrow(ArtifactError);
    expect(() => s.read(ref)).toThrow(/invalid artifact ref .*expected "art-" followed by 16 lowercase hex digits/);
    expect(s.has(ref)).toBe(false);
  });

  it('says clearly when a well-formed ref is not there, and refuses bad offsets', () => {
    const s = store();
    expect(() => s.read('art-0123456789abcdef')).toThrow(/artifact art-0123456789abcdef not found in/);
    const { ref } = s.put('x');
    expect(() => s.read(ref, -1)).toThrow(/invalid offset -1/);
    expect(() => s.read(ref, 0, 0)).toThrow(/invalid limit 0/);
    expect(() => s.read(ref, 0.5)).toThrow(/invalid offset/);
  });
});
