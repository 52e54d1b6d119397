import { visible } from '../approval/channels/screen';

export interface FailureLinesOptions {
  /** How many lines at most (default 3). */
  max?: number;
  /** Characters per line at most, the ellipsis included (default 160). */
  width?: number;
}

/** Lines the bash tool puts before the output (bash.ts observe): they repeat what the step line says. */
const STATUS_LINE = /^(exit code \S+|files changed: |timed out|cancelled$)/;

/**
 * The first lines of a failed step's output, from its observation as the log holds it (framed by
 * observe/frame.ts), safe to print: the output is untrusted, so control and bidi characters are
 * shown as escapes and never reach the terminal, a carriage return keeps only what a terminal
 * would have left visible, and each line is cut to the width.
 */
export function failureLines(content: string, opts: FailureLinesOptions = {}): string[] {
  const max = opts.max ?? 3;
  const width = Math.max(8, opts.width ?? 160);
  const lines = body(content).split('\n');
  let start = 0;
  while (start < lines.length && STATUS_LINE.test(lines[start]!)) start++;
  const out: string[] = [];
  for (const raw of lines.slice(start)) {
    if (out.length >= max) break;
    const shown = (
      raw
        .split('\r')
        .filter((s) => s !== '')
        .pop() ?? ''
    )
      .replace(/\t/g, ' ')
      .trimEnd();
    if (shown.trim() === '') continue;
    out.push(cut(visible(shown), width));
  }
  return out;
}

/** What is inside the untrusted-data frame, or everything after the provenance line. */
function body(content: string): string {
  const open = /^<untrusted-data id="[^"]*" nonce="([0-9a-f]+)">$/m.exec(content);
  if (open) {
    const from = open.index + open[0].length + 1;
    const end = content.lastIndexOf(`\n</untrusted-data nonce="${open[1]}">`);
    return content.slice(from, end >= from ? end : undefined);
  }
  const nl = content.indexOf('\n');
  return nl < 0 ? '' : content.slice(nl + 1);
}

function cut(s: string, width: number): string {
  const chars = Array.from(s);
  return chars.length <= width ? s : `${chars.slice(0, width - 1).join('')}…`;
}
