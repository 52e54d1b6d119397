/**
 * The known names closest to a mistyped one, for "did you mean": first those within a few edits
 * (`imgae` → `image`; optimal string alignment: an edit, insertion, deletion or swap of two
 * neighbours costs one), then those the word is a whole part of (`edit` → `edit_file`, `memory` →
 * `memoryMb`): people often write half of a compound name.
 */
export function closeMatches(word: string, known: readonly string[]): string[] {
  const lower = word.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  const scored = known
    .map((k) => ({ k, d: distance(lower, k.toLowerCase()) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d)
    .map(({ k }) => k);
  const partOf = known.filter((k) => !scored.includes(k) && lower.length >= 2 && parts(k).includes(lower));
  return [...scored, ...partOf];
}

/** `edit_file` → edit, file; `memoryMb` → memory, mb; `--dry-run` → dry, run. */
function parts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
