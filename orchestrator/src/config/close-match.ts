/**
 * The known names closest to a mistyped one (`imgae` → `image`), for "did you mean". Distance is
 * optimal string alignment: an edit, insertion, deletion or swap of two neighbours costs one.
 */
export function closeMatches(word: string, known: readonly string[]): string[] {
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  const scored = known
    .map((k) => ({ k, d: distance(word.toLowerCase(), k.toLowerCase()) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d);
  return scored.map(({ k }) => k);
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
