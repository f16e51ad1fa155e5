import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/report/html/escape-html.js';

/** What escapeHtml must give: the five characters as entities, everything else as it is. */
const reference = (text: string) => text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

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
    const alphabet = ['a', ' ', '\n', '&', '<', '>', '"', "'", 'é', '😀', '\ud800', '&amp;'];
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(escapeHtml(text)).toBe(reference(text));
    }
    const json = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ text: `<b>${i}</b> & 'more'`, n: i })), null, 2);
    expect(escapeHtml(json)).toBe(reference(json));
  });

  it('gives text with nothing to escape back unchanged', () => {
    const text = 'step-1 succeeded in 12 ms'.repeat(100);
    expect(escapeHtml(text)).toBe(text);
  });
});
