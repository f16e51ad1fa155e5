// Text that apps write (error messages, progress messages, questions, tool
// descriptions, their stderr) reaches the user's terminal. Control characters
// in it would be obeyed there: ESC starts sequences that clear the screen,
// move the cursor over earlier lines, set the window title or write to the
// clipboard; a carriage return overwrites the line; bidi controls reorder what
// is shown. Such text is shown with those characters escaped (`\u001b`);
// newlines and tabs stay, and so do Windows line ends (CRLF, shown as newlines).

// eslint-disable-next-line no-control-regex -- control characters are what is escaped
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');
const CRLF = /\r\n/g;

/** `text` with every character that would steer a terminal written as `\uXXXX` (a CRLF line end is shown as a plain one). */
export function safeForTerminal(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(CRLF, '\n').replace(UNSAFE_ALL, unicodeEscape);
}

// JSON.stringify escapes C0 controls but writes C1 controls, DEL, bidi
// controls and the two Unicode line separators as they are. Inside a JSON
// string their `\uXXXX` form parses to the same value.
const JSON_UNSAFE = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const JSON_UNSAFE_ALL = new RegExp(JSON_UNSAFE.source, 'g');

/**
 * `value` as JSON for stdout (`--json`), two-space indented unless `indent` is 0, with a final newline:
 * what JSON.stringify makes, with the characters it leaves as they are that would steer a terminal
 * written as `\uXXXX` (the same JSON to a parser).
 */
export function jsonForOutput(value: unknown, indent: 0 | 2 = 2): string {
  const json = JSON.stringify(value, null, indent || undefined) ?? 'null';
  return `${JSON_UNSAFE.test(json) ? json.replace(JSON_UNSAFE_ALL, unicodeEscape) : json}\n`;
}

/** A character (of the BMP) as `\\uXXXX`. */
function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The most characters of one message (an app's error, a progress message) a line of progress shows; the record keeps more of an error's. */
export const MAX_SHOWN_MESSAGE_CHARS = 4_000;

/**
 * An app's message as a line of progress shows it: cut at MAX_SHOWN_MESSAGE_CHARS, saying how much was left out
 * (`where` the rest is: by default the run record, which keeps errors; a progress message is kept nowhere), and
 * escaped (safeForTerminal).
 */
export function shownMessage(text: string, where = ' in the run record'): string {
  return safeForTerminal(cutText(text, MAX_SHOWN_MESSAGE_CHARS, where));
}

/** `text` cut to about `max` characters (never between the two halves of a character outside the BMP, an emoji), saying how many more there were. */
export function cutText(text: string, max: number, where = ''): string {
  if (text.length <= max) return text;
  const end = max - (/[\ud800-\udbff]/.test(text[max - 1]) ? 1 : 0);
  return `${text.slice(0, end)}… (${(text.length - end).toLocaleString('en-US')} more characters${where})`;
}

// SGR sequences (`ESC [ … m`) only set colors and styles; apps log with them.
// eslint-disable-next-line no-control-regex -- ESC is what starts them
const SGR = /\u001b\[[0-9;:]*m/g;
/** An SGR sequence cut off at the end of a chunk, to be finished by the next one. */
// eslint-disable-next-line no-control-regex -- ESC is what starts them
const OPEN_SGR_AT_END = /\u001b(\[[0-9;:]*)?$/;

/**
 * A filter for text that arrives in chunks (a log file read as a stream): each
 * chunk comes out as safeForTerminal makes it, but for colors and styles
 * (SGR sequences), which are kept. A sequence split between two chunks is
 * held back until it is whole; `end()` gives what is left.
 */
export function terminalFilterKeepingColors(): { write(chunk: string): string; end(): string } {
  let held = '';
  const filter = (text: string): string => {
    let out = '';
    let from = 0;
    for (const match of text.matchAll(SGR)) {
      out += safeForTerminal(text.slice(from, match.index)) + match[0];
      from = match.index + match[0].length;
    }
    return out + safeForTerminal(text.slice(from));
  };
  return {
    write(chunk) {
      const text = held + chunk;
      const open = OPEN_SGR_AT_END.exec(text);
      held = open ? open[0] : '';
      return filter(open ? text.slice(0, open.index) : text);
    },
    end() {
      const rest = held;
      held = '';
      return safeForTerminal(rest);
    },
  };
}
