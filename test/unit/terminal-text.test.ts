import { describe, expect, it } from 'vitest';
import { safeForTerminal, shownMessage, terminalFilterKeepingColors } from '../../src/terminal-text.js';

describe('safeForTerminal', () => {
  it('escapes what would steer a terminal: ESC sequences, BEL, CR, C1 controls (a lone CSI), bidi controls', () => {
    expect(safeForTerminal('a\u001b[2Jb\u001b]0;title\u0007c\rd\u009b31me\u202ef')).toBe('a\\u001b[2Jb\\u001b]0;title\\u0007c\\u000dd\\u009b31me\\u202ef');
  });

  it('shows a Windows line end (CRLF) as a newline, and escapes a lone carriage return', () => {
    expect(safeForTerminal('line one\r\nline two\rover')).toBe('line one\nline two\\u000dover');
  });

  it('leaves ordinary text, newlines, tabs and other languages as they are (the same string when nothing needs escaping)', () => {
    const text = 'line one\n\tline two — naïve 日本語 🙂';
    expect(safeForTerminal(text)).toBe(text);
  });
});

describe('shownMessage', () => {
  it('cuts a long message at 4,000 characters, saying how many more the record has, and escapes what it shows', () => {
    const shown = shownMessage(`\u001b${'x'.repeat(1_000_000)}`);
    expect(shown).toBe(`\\u001b${'x'.repeat(3_999)}… (996,001 more characters in the run record)`);
    expect(shownMessage('short \u0007')).toBe('short \\u0007');
  });

  it('never cuts between the two halves of an emoji', () => {
    const shown = shownMessage(`${'x'.repeat(3_999)}🙂🙂`);
    expect(shown).toBe(`${'x'.repeat(3_999)}… (4 more characters in the run record)`);
  });
});

describe('terminalFilterKeepingColors', () => {
  it('keeps colors and styles, escapes every other sequence, and finishes a sequence split between chunks', () => {
    const filter = terminalFilterKeepingColors();
    const out = [filter.write('a \u001b[1;32mok\u001b[0m \u001b[2J b \u001b[3'), filter.write('1mred\u001b'), filter.write('[0m'), filter.end()].join('');
    expect(out).toBe('a \u001b[1;32mok\u001b[0m \\u001b[2J b \u001b[31mred\u001b[0m');
  });

  it('escapes a sequence the log ends in the middle of', () => {
    const filter = terminalFilterKeepingColors();
    expect(filter.write('x\u001b[') + filter.end()).toBe('x\\u001b[');
  });
});
