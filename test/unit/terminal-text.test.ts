import { describe, expect, it } from 'vitest';
import { jsonForOutput, safeForTerminal, shownMessage, terminalFilterKeepingColors } from '../../src/terminal-text.js';
import type { RunRecord } from '../../src/artifacts/run-record.js';
import { createProgressReporter } from '../../src/report/progress.js';

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

describe('jsonForOutput', () => {
  it('writes C1 controls, DEL, bidi controls and line separators as \\u escapes, which parse back to the same value', () => {
    const value = { text: 'a\u009b2Jb\u007f\u202eevil\u2028\u001b[0m', n: [1, 2] };
    const json = jsonForOutput(value);
    // eslint-disable-next-line no-control-regex -- what must not reach the terminal
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u2028]/);
    expect(json).toContain('a\\u009b2Jb\\u007f\\u202eevil\\u2028\\u001b[0m');
    expect(JSON.parse(json)).toEqual(value);
    expect(json.endsWith('}\n')).toBe(true);
  });

  it('is JSON.stringify indented by two, or on one line, when nothing needs escaping', () => {
    const value = { a: ['x', 'é ✓ 😀'] };
    expect(jsonForOutput(value)).toBe(`${JSON.stringify(value, null, 2)}\n`);
    expect(jsonForOutput(value, 0)).toBe(`${JSON.stringify(value)}\n`);
    expect(jsonForOutput(undefined)).toBe('null\n');
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

describe('a progress message on the terminal', () => {
  it('is cut at 4,000 characters like an error, without pointing at the run record, which keeps no progress', () => {
    const lines: string[] = [];
    const report = createProgressReporter({ write: (text) => lines.push(text), tty: false, secretValues: [], now: () => 0 });
    report({ type: 'progress', run: {} as RunRecord, stepId: 'a', progress: 1, total: 2, message: 'y'.repeat(16_000) });
    expect(lines).toEqual([`… a 1/2 (50%) ${'y'.repeat(4_000)}… (12,000 more characters)\n`]);
  });
});
