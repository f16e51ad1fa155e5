import { describe, expect, it } from 'vitest';
import { escapeHtml, escapeText } from '../../src/report/html/escape-html.js';

/** What escapeHtml must give: the five characters as entities, everything else as it is. */
const reference = (text: string) => text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

/** 500 texts of up to 40 pieces: letters, blanks, the characters HTML gives a meaning to, non-ASCII, a lone surrogate. */
function randomTexts(seed: number): string[] {
  const alphabet = ['a', ' ', '\n', '&', '<', '>', '"', "'", 'é', '😀', '\ud800', '&amp;'];
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: 500 }, () => Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
}

describe('escapeHtml', () => {
  it.for([
    [`<img src=x onerror="alert('1')">&amp;`, '&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;amp;'],
    ['"', '&quot;'],
    ['a<', 'a&lt;'],
    ['>a', '&gt;a'],
    ['<<>>', '&lt;&lt;&gt;&gt;'],
    ['', ''],
    ['é 😀 \u0000 \ud800 `x` =', 'é 😀 \u0000 \ud800 `x` ='],
  ])('escapes the five characters HTML gives a meaning to, wherever they are, and nothing else: %j', ([text, escaped]) => {
    expect(escapeHtml(text!)).toBe(escaped);
  });

  it('gives what a replace of each character gives, for random text and pretty JSON', () => {
    for (const text of randomTexts(7)) expect(escapeHtml(text)).toBe(reference(text));
    const json = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ text: `<b>${i}</b> & 'more'`, n: i })), null, 2);
    expect(escapeHtml(json)).toBe(reference(json));
  });

  it('gives text with nothing to escape back unchanged', () => {
    const text = 'step-1 succeeded in 12 ms'.repeat(100);
    expect(escapeHtml(text)).toBe(text);
  });
});

describe('escapeText', () => {
  /** What escapeText must give: `&`, `<` and `>` as entities, quotes and everything else as they are. */
  const textReference = (text: string) => text.replace(/[&<>]/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[char]!);

  it.for([
    [`<img src=x onerror="alert('1')">&amp;`, `&lt;img src=x onerror="alert('1')"&gt;&amp;amp;`],
    ['{\n  "text": "x"\n}', '{\n  "text": "x"\n}'],
    ['</pre><script>', '&lt;/pre&gt;&lt;script&gt;'],
    ['', ''],
  ])('escapes what starts markup in element content, and leaves quotes: %j', ([text, escaped]) => {
    expect(escapeText(text!)).toBe(escaped);
  });

  it('gives what a replace of each of the three characters gives, for random text', () => {
    for (const text of randomTexts(11)) expect(escapeText(text)).toBe(textReference(text));
  });
});
