export interface Truncated {
  text: string;
  truncated: boolean;
  /** Characters left out of the middle. */
  omitted: number;
}

/**
 * Keeps the head and the tail within the budget, cutting at line breaks where one is near, and
 * says how much was left out. The middle is not lost: the caller stores the full text as an
 * artifact and the marker names it.
 */
export function headTail(text: string, budget: number, artifactRef?: string): Truncated {
  if (text.length <= budget) return { text, truncated: false, omitted: 0 };
  const half = Math.floor(budget / 2);
  let head = text.slice(0, half);
  let tail = text.slice(text.length - half);
  const headBreak = head.lastIndexOf('\n');
  if (headBreak > half * 0.8) head = head.slice(0, headBreak + 1);
  const tailBreak = tail.indexOf('\n');
  if (tailBreak >= 0 && tailBreak < half * 0.2) tail = tail.slice(tailBreak + 1);
  const omitted = text.length - head.length - tail.length;
  const where = artifactRef
    ? `; the full output is artifact ${artifactRef}: ` +
      `page through it with read_artifact {"ref": "${artifactRef}", "offset": 0}`
    : '';
  return {
    text: `${head}\n[… ${omitted} characters omitted of ${text.length}${where} …]\n${tail}`,
    truncated: true,
    omitted,
  };
}
