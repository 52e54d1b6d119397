/**
 * Control and bidi characters from the model could move the cursor, recolour or reorder what the
 * person reads (and so hide what they approve); they are shown as escapes instead. Tabs and
 * newlines stay in the preview; single-line fields escape newlines too.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;
export function visible(s: string): string {
  return s.replace(UNSAFE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
export function oneLine(s: string): string {
  return visible(s).replace(/\n/g, '\\n').replace(/\t/g, ' ');
}
