/**
 * Terminal escape sequences and control characters are removed before the model sees text: they
 * carry nothing the model needs, and hidden sequences are a way to smuggle content past a reader.
 */
// CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and other two-character ESC sequences.

const ANSI =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

export function sanitize(text: string): string {
  return text.replace(ANSI, '').replace(/\r\n/g, '\n').replace(/\r/g, '\n').replace(CONTROL, '');
}
