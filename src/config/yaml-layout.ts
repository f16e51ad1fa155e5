import { loadAll, YAMLException, type EventType, type State } from 'js-yaml';
import { CORE_SCHEMA } from './yaml-core-schema.js';

// Parses YAML with js-yaml and keeps where each mapping entry and list item is
// written, as character offsets, so that messages can say file:line:col. The
// `yaml` library's full syntax tree took 1.5 s and 200 MB for a 10,000-step
// workflow; js-yaml builds plain data and reports each node it opens and
// closes, which is all a position index needs.

/**
 * Where the parts of one mapping or list are written, as character offsets.
 * A list's layout holds each item's offset; a mapping's holds, per entry, its
 * key, the key's offset and the value's offset (-1 when there is no value),
 * flat so that 10,000 steps make few objects.
 */
export type Layout = (string | number)[];

/** Parsed data plus where its parts are written. */
export interface LaidOutYaml {
  data: unknown;
  /** Where the document's content starts (0 for an empty document). */
  rootStart: number;
  /** The layout of every mapping and list in `data` (but what is inside `deferredLists`), keyed by the object itself. */
  layouts: Map<object, Layout>;
  /**
   * With `deferItems`: the top-level block lists whose items' insides were not
   * laid out, with where each list ends (its items' offsets are in `layouts`).
   */
  deferredLists: Map<unknown[], { end: number }>;
  /** With `deferItems`: a node was left without layouts that is not inside a deferred list (lay the whole text out again). */
  incomplete: boolean;
}

/** How a document is parsed: see parseLaidOutYaml. */
export interface LayoutOptions {
  json?: boolean;
  /**
   * Leaves the insides of the items of top-level block lists (a workflow's
   * steps) without layouts: they are laid out when first asked for, one item
   * at a time (see yaml-source.ts).
   */
  deferItems?: boolean;
}

/** A YAML syntax error at a character offset; `exact` when the offset is known to be where the mistake is. */
export class YamlSyntaxError extends Error {
  constructor(
    readonly offset: number,
    message: string,
    readonly exact = false,
  ) {
    super(message);
    this.name = 'YamlSyntaxError';
  }
}

/**
 * The most nodes aliases may add to a document: each `*alias` counts as a copy
 * of what its anchor holds. js-yaml shares one object per anchor, so a
 * 541-byte "billion laughs" file (ten levels of anchors, each list aliasing
 * the one before nine times) parses in milliseconds, and then every walk over
 * the data (schema validation, expressions) met 3.4 billion nodes: 54 s and
 * 3.3 GB. Ordinary files alias a few mappings of a few keys.
 */
export const MAX_ALIAS_NODES = 100_000;

/** Aliases past MAX_ALIAS_NODES, at the character offset of the alias that went past it. */
export class YamlLimitError extends Error {
  constructor(
    readonly offset: number,
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'YamlLimitError';
  }
}

/**
 * Parses one YAML document (YAML 1.2 core schema; with `json`, duplicate keys
 * are allowed and the last wins, like JSON.parse). Throws YamlSyntaxError, and
 * YamlLimitError when aliases expand to more than MAX_ALIAS_NODES nodes.
 */
export function parseLaidOutYaml(text: string, options: LayoutOptions = {}): LaidOutYaml {
  const recorder = new LayoutRecorder(text, options.deferItems ?? false);
  let documents: unknown[];
  try {
    documents = loadAll(text, null, { schema: CORE_SCHEMA, json: options.json ?? false, listener: recorder.listener, onWarning: recorder.onWarning });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    // A second document is the first problem to report, even when a later part of it does not parse.
    throw findSecondDocument(text, recorder) ?? toSyntaxError(error);
  }
  const problem = findSecondDocument(text, recorder);
  if (problem) throw problem;
  const [root] = recorder.roots;
  // An empty document is null, and is located at the top of the file.
  return {
    data: documents[0] ?? null,
    rootStart: root && !root.empty ? root.start : 0,
    layouts: recorder.layouts,
    deferredLists: recorder.deferredLists,
    incomplete: recorder.incomplete,
  };
}

/** How deep runner files may nest: js-yaml's own default limit (its `maxDepth`), which is what stops a deeper file. */
export const MAX_FILE_NESTING = 100;

/** What the error for a file nested too deep says (callers recognise it by this text). */
export const NESTING_LIMIT_MESSAGE = `nested deeper than ${MAX_FILE_NESTING} levels (limit for runner files)`;

/** A js-yaml error as a YamlSyntaxError; going past the nesting limit is exact, and said in our words. */
function toSyntaxError(error: YAMLException): YamlSyntaxError {
  const offset = error.mark?.position ?? 0;
  if (error.reason?.startsWith('nesting exceeded maxDepth')) {
    return new YamlSyntaxError(offset, NESTING_LIMIT_MESSAGE, true);
  }
  return new YamlSyntaxError(offset, error.reason);
}

/** An error at the second document's `---`, when there is a second document. */
function findSecondDocument(text: string, recorder: LayoutRecorder): YamlSyntaxError | undefined {
  const [first] = recorder.roots;
  const secondStart = recorder.rootOpens[1];
  if (!first || secondStart === undefined) return undefined;
  const separator = /(?:^|\n)---(?:\s|$)/.exec(text.slice(first.end, secondStart));
  // Without `---`, js-yaml also counts a comment after `...` as a document.
  if (!separator && (recorder.roots.length < 2 || recorder.roots[1].empty)) return undefined;
  const offset = separator ? first.end + separator.index + separator[0].indexOf('-') : skipToContent(text, secondStart);
  return new YamlSyntaxError(offset, 'a second document starts here, and a file holds only one', true);
}

const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const BANG = 33;
const HASH = 35;
const AMPERSAND = 38;
const ASTERISK = 42;
const DASH = 45;
const COLON = 58;
const LESS_THAN = 60;

/**
 * Turns js-yaml's open/close events (document order, children inside their
 * parent) into layouts. Finished nodes wait in the `child*` arrays until their
 * parent closes; then its direct children are on top, and keys are the
 * children followed by `:`.
 */
class LayoutRecorder {
  readonly layouts = new Map<object, Layout>();
  /** Where each document's top-level node opened, and the finished ones. */
  readonly rootOpens: number[] = [];
  readonly roots: { start: number; end: number; empty: boolean }[] = [];
  private readonly opens: number[] = [];
  private readonly bases: number[] = [];
  /** How many finished nodes wait in the `child*` arrays (written by index: truncating arrays was slow). */
  private count = 0;
  private readonly childStarts: number[] = [];
  private readonly childEnds: number[] = [];
  private readonly childResults: unknown[] = [];
  /** Nothing was written: an empty value or list item, or a failed attempt to read one more key. */
  private readonly childEmpty: boolean[] = [];
  /** Nodes added by the aliases read so far (see MAX_ALIAS_NODES). */
  private aliasNodes = 0;
  readonly deferredLists = new Map<unknown[], { end: number }>();
  incomplete = false;
  /** While a top-level node that looks like a block list is open (deferItems): its depth in `opens`, else -1. */
  private deferring = -1;

  constructor(
    private readonly text: string,
    private readonly deferItems: boolean,
  ) {}

  readonly listener = (event: EventType, state: State): void => {
    if (event === 'open') {
      if (this.opens.length === 0) this.rootOpens.push(state.position);
      // A top-level value that starts with `- ` is a block list: its items' insides are laid out later, on demand.
      if (this.deferItems && this.opens.length === 1 && this.deferring === -1 && startsBlockList(this.text, skipToContent(this.text, state.position))) {
        this.deferring = 1;
      }
      this.opens.push(state.position);
      this.bases.push(this.count);
      return;
    }
    const open = this.opens.pop()!;
    const depth = this.opens.length;
    const base = this.bases.pop()!;
    const end = state.position;
    // js-yaml leaves `kind` null for an alias and for an empty node.
    const kind = state.kind as string | null;
    const result: unknown = state.result;
    let start = skipToContent(this.text, open);
    const isAlias = kind === null && this.text.charCodeAt(start) === ASTERISK && start < end;
    const empty = kind === null && !isAlias;
    if (empty) start = skipBlanksAndProperties(this.text, open);
    // A block value like `{ a: 1 }` is first read as a would-be key, so its node closes twice.
    const isPassedThrough = this.count === base + 1 && this.childResults[base] === result;
    if (isAlias && !isPassedThrough) this.countAlias(result, start);
    const deferred = this.deferring !== -1 && depth > this.deferring;
    if (depth === this.deferring) {
      this.deferring = -1;
      if (kind === 'sequence' && !isPassedThrough) this.deferredLists.set(result as unknown[], { end });
      else if (this.count > base) this.incomplete = true;
    }
    if (kind === 'mapping' && !isPassedThrough && !deferred) this.layouts.set(result as object, this.layMapping(base));
    else if (kind === 'sequence' && !isPassedThrough && !deferred) this.layouts.set(result as object, this.laySequence(base, start, end, result as unknown[]));
    this.count = base;
    if (this.opens.length === 0) this.roots.push({ start, end, empty });
    else {
      const i = this.count++;
      this.childStarts[i] = start;
      this.childEnds[i] = end;
      this.childResults[i] = result;
      this.childEmpty[i] = empty;
    }
  };

  /**
   * js-yaml only warns when the next lines of a quoted string are not indented
   * enough, which is how an unclosed quote swallows the rest of the file: make
   * that an error. (It warns of the same in JSON-style `{ }` and `[ ]`, which
   * is fine there.)
   */
  readonly onWarning = (warning: YAMLException): void => {
    const open = this.opens[this.opens.length - 1];
    const first = open === undefined ? '' : this.text[skipToContent(this.text, open)];
    if (first === '"' || first === "'") throw warning;
  };

  /** Adds what the alias at `offset` copies to the count; throws once past MAX_ALIAS_NODES. */
  private countAlias(target: unknown, offset: number): void {
    this.aliasNodes += countNodes(target, MAX_ALIAS_NODES - this.aliasNodes);
    if (this.aliasNodes > MAX_ALIAS_NODES) {
      throw new YamlLimitError(
        offset,
        `YAML aliases expand to more than ${MAX_ALIAS_NODES.toLocaleString('en-US')} nodes (limit for runner files)`,
        'each `*alias` counts as a copy of what its anchor holds, and aliases inside anchors multiply: write the repeated values out, or alias fewer levels deep',
      );
    }
  }

  /** Whether child `i` is a key with a value: it is followed by `:`, and the value is child `i + 1`. */
  private hasValue(i: number): boolean {
    return i + 1 < this.count && isFollowedByColon(this.text, this.childEnds[i]);
  }

  private layMapping(base: number): Layout {
    const layout: Layout = [];
    for (let i = base; i < this.count; ) {
      const hasValue = this.hasValue(i);
      // A block mapping ends with an attempt to read one more key, which finds nothing.
      if (hasValue || !this.childEmpty[i]) {
        layout.push(String(this.childResults[i]), this.childStarts[i], hasValue ? this.childStarts[i + 1] : -1);
      }
      i += hasValue ? 2 : 1;
    }
    return layout;
  }

  private laySequence(base: number, start: number, end: number, items: unknown[]): Layout {
    const { childStarts, childEnds, count, text } = this;
    if (text[start] === '[') return this.layFlowSequence(base, items);
    if (count - base === items.length) return childStarts.slice(base, count);
    // js-yaml reads an item with nothing after its `-` without an event: find the dashes around the items it did report.
    const layout: Layout = [];
    let from = start;
    for (let i = base; i <= count; i++) {
      const isLast = i === count;
      const dashes = findDashes(text, from, isLast ? end : childStarts[i]);
      const emptyCount = isLast ? dashes.length : dashes.length - 1;
      for (let d = 0; d < emptyCount; d++) layout.push(skipBlanks(text, dashes[d] + 1));
      if (isLast) break;
      layout.push(childStarts[i]);
      from = childEnds[i]!;
    }
    return layout;
  }

  /** `[a: b, c]` holds a one-entry mapping `{a: b}` that has no event of its own. */
  private layFlowSequence(base: number, items: unknown[]): Layout {
    const layout: Layout = [];
    for (let i = base; i < this.count; ) {
      const hasValue = this.hasValue(i);
      const item = items[layout.length];
      if (hasValue && typeof item === 'object' && item !== null) {
        this.layouts.set(item, [String(this.childResults[i]), this.childStarts[i], this.childStarts[i + 1]]);
      }
      layout.push(this.childStarts[i]);
      i += hasValue ? 2 : 1;
    }
    return layout;
  }
}

/**
 * The nodes of `value` (itself, and each key, value and item inside), counted
 * until past `budget`: the walk costs about what the limit allows, however
 * many times the data shares an object.
 */
function countNodes(value: unknown, budget: number): number {
  let count = 0;
  const pending = [value];
  while (pending.length > 0 && count <= budget) {
    const node = pending.pop();
    count++;
    if (typeof node !== 'object' || node === null) continue;
    const children = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    // A mapping's keys are nodes too.
    if (!Array.isArray(node)) count += children.length;
    for (const child of children) pending.push(child);
  }
  return count;
}

/** Whether a block list's first `-` entry marker is at `offset`. */
function startsBlockList(text: string, offset: number): boolean {
  if (text.charCodeAt(offset) !== DASH) return false;
  const next = text.charCodeAt(offset + 1);
  return next === SPACE || next === TAB || next === LF || next === CR || Number.isNaN(next);
}

/** Skips spaces, line breaks, comments, tags and anchors: where a node's content starts. */
function skipToContent(text: string, offset: number): number {
  let i = offset;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === SPACE || c === TAB || c === LF || c === CR) i++;
    else if (c === HASH) {
      const eol = text.indexOf('\n', i);
      if (eol === -1) return text.length;
      i = eol;
    } else if (c === BANG || c === AMPERSAND) {
      i = skipProperty(text, i);
    } else return i;
  }
}

/** Skips spaces and tabs on the same line: where an empty node is. */
function skipBlanks(text: string, offset: number): number {
  let i = offset;
  while (text.charCodeAt(i) === SPACE || text.charCodeAt(i) === TAB) i++;
  return i;
}

/** Skips spaces, tabs, tags and anchors on the same line: where an empty node (`- &anchor`) is. */
function skipBlanksAndProperties(text: string, offset: number): number {
  let i = skipBlanks(text, offset);
  while (text.charCodeAt(i) === BANG || text.charCodeAt(i) === AMPERSAND) i = skipBlanks(text, skipProperty(text, i));
  return i;
}

/** Skips a tag (`!!str`, `!<tag:...>`) or an anchor (`&name`) starting at `offset`. */
function skipProperty(text: string, offset: number): number {
  if (text.charCodeAt(offset + 1) === LESS_THAN) {
    const end = text.indexOf('>', offset);
    return end === -1 ? text.length : end + 1;
  }
  let i = offset + 1;
  while (i < text.length && !/[\s,[\]{}]/.test(text[i])) i++;
  return i;
}

/** Whether the next thing after `offset` (past spaces, line breaks and comments) is `:`, which makes what ends there a key. */
function isFollowedByColon(text: string, offset: number): boolean {
  let i = offset;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === SPACE || c === TAB || c === LF || c === CR) i++;
    else if (c === HASH) {
      i = text.indexOf('\n', i);
      if (i === -1) return false;
    } else return c === COLON;
  }
}

/** The `-` entry markers of a block list between two offsets, where only blanks, comments and markers are. */
function findDashes(text: string, from: number, to: number): number[] {
  const dashes: number[] = [];
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === DASH) dashes.push(i);
    else if (c === HASH) {
      const eol = text.indexOf('\n', i);
      i = eol === -1 ? to : eol;
    }
  }
  return dashes;
}
