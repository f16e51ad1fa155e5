import { createScanner, SyntaxKind } from 'jsonc-parser';
import type { Diagnostic } from '../errors.js';
import { parseJsonSource, type YamlSource } from './yaml-source.js';

/**
 * Parses JSON with comments and trailing commas (VS Code's mcp.json, and
 * what people write in the others) keeping positions: comments and trailing
 * commas are blanked to spaces, which leaves every other character where it
 * was, and the rest is strict JSON. A real syntax error is reported with its
 * line:col like any JSON file.
 */
export function parseJsoncSource(text: string, file: string, diagnostics: Diagnostic[]): { source: YamlSource; data: unknown } {
  return parseJsonSource(blankCommentsAndTrailingCommas(text), file, diagnostics);
}

/** The text with `//` and block comments and every comma before `}` or `]` replaced by spaces (newlines kept). */
export function blankCommentsAndTrailingCommas(text: string): string {
  const scanner = createScanner(text, false);
  const blanks: [number, number][] = [];
  let pendingComma: number | undefined;
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    switch (kind) {
      case SyntaxKind.LineCommentTrivia:
      case SyntaxKind.BlockCommentTrivia:
        blanks.push([scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()]);
        break;
      case SyntaxKind.Trivia:
      case SyntaxKind.LineBreakTrivia:
        break;
      case SyntaxKind.CommaToken:
        pendingComma = scanner.getTokenOffset();
        break;
      default:
        if (pendingComma !== undefined && (kind === SyntaxKind.CloseBraceToken || kind === SyntaxKind.CloseBracketToken)) {
          blanks.push([pendingComma, pendingComma + 1]);
        }
        pendingComma = undefined;
    }
  }
  if (blanks.length === 0) return text;
  let result = '';
  let from = 0;
  // A trailing comma is known only at the `}` after it, past any comment in between: put them in order.
  for (const [start, end] of blanks.sort((a, b) => a[0] - b[0])) {
    result += text.slice(from, start) + text.slice(start, end).replace(/[^\r\n]/g, ' ');
    from = end;
  }
  return result + text.slice(from);
}
