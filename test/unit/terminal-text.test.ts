import { describe, expect, it } from 'vitest';
import { safeForTerminal } from '../../src/terminal-text.js';

describe('safeForTerminal', () => {
  it('escapes what would steer a terminal: ESC sequences, BEL, CR, C1 controls (a lone CSI), bidi controls', () => {
    expect(safeForTerminal('a\u001b[2Jb\u001b]0;title\u0007c\rd\u009b31me\u202ef')).toBe('a\\u001b[2Jb\\u001b]0;title\\u0007c\\u000dd\\u009b31me\\u202ef');
  });

  it('leaves ordinary text, newlines, tabs and other languages as they are (the same string when nothing needs escaping)', () => {
    const text = 'line one\n\tline two — naïve 日本語 🙂';
    expect(safeForTerminal(text)).toBe(text);
  });
});
