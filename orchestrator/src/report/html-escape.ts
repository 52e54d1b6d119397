import { visible } from '../approval/channels/screen';

/**
 * Putting text the model or the repository wrote into the HTML report without letting it become
 * markup. Every page is built with the `markup` tag below: each value put into a template is escaped
 * unless it is `SafeHtml` that the same tag built, so an untrusted string cannot be inserted raw by
 * forgetting to escape it. The report's own markup never puts a value in an unquoted attribute, an
 * event handler, a URL, a <script> or a <style>: only in text and in quoted attributes, where the
 * escaping below is enough.
 */

/** Markup built by `markup` (or the report's own fixed text): inserted as it is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Untrusted text as HTML text or a quoted attribute's value: `& < > " '` as entities, and control
 * and bidi characters (which could hide or reorder what a reviewer reads) shown as escapes
 * (`\u{202e}`), carriage returns too; newlines and tabs stay, for <pre>.
 */
export function escapeHtml(text: string): string {
  return visible(text).replace(/[&<>"']/g, (c) => ENTITY[c]!);
}

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined || v === false || v === true) return '';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return escapeHtml(v);
  return v.map(render).join('');
}

/** A template of the report's markup: every value is escaped (strings) or inserted (SafeHtml, arrays of them). */
export function markup(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}
