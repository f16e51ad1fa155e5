// Reading the docs for docs-examples.test.ts: fenced code blocks with their
// info strings, links and headings, `runner` commands in shell text, and
// output samples matched against what a command printed.

/** One fenced code block of a Markdown file. */
export interface DocBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The language: the first word of the info string ('' when there is none). */
  lang: string;
  /** The other words of the info string without `=` (`workflow`, `run`). */
  words: string[];
  /** The `key=value` words of the info string. */
  attrs: Record<string, string>;
  /** The block's text, each line ending in a newline. */
  body: string;
  /** The info string as written. */
  info: string;
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** Every fenced code block of a Markdown text, in order. An unclosed block runs to the end, as in CommonMark. */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, rest] = open as unknown as [string, string, string, string];
    // A backtick fence's info string may not contain backticks (that would be inline code).
    if (fence[0] === '`' && rest.includes('`')) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]!);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length) break;
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart());
    }
    const info = rest.trim();
    const [lang = '', ...others] = info.split(/\s+/).filter(Boolean);
    const attrs: Record<string, string> = {};
    const words: string[] = [];
    for (const word of others) {
      const eq = word.indexOf('=');
      if (eq > 0) attrs[word.slice(0, eq)] = word.slice(eq + 1);
      else words.push(word);
    }
    blocks.push({ file, line: i + 1, lang, words, attrs, body: body.map((line) => `${line}\n`).join(''), info });
    i = j;
  }
  return blocks;
}

/** The Markdown outside fenced code blocks, with fenced lines blanked so line numbers stay. */
export function proseOf(markdown: string): string {
  const blocked = new Set<number>();
  const lines = markdown.split('\n');
  for (const block of extractBlocks(markdown, '')) {
    const end = block.line + block.body.split('\n').length; // opening fence + body lines + closing fence
    for (let line = block.line; line <= Math.min(end, lines.length); line++) blocked.add(line);
  }
  return lines.map((line, index) => (blocked.has(index + 1) ? '' : line)).join('\n');
}

/** Link targets in Markdown prose (`[text](target)`), inline code left out. */
export function findLinks(prose: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  prose.split('\n').forEach((text, index) => {
    const withoutCode = text.replace(/(`+)[^`]*?\1/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: match[1]!, line: index + 1 });
  });
  return links;
}

/** The anchors GitHub gives a Markdown file's headings (`## Conditions: \`if\`` → `conditions-if`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of proseOf(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  return anchors;
}

/** A command's options as its `--help` lists them: each spelling, and whether it takes a value. */
export interface CommandHelp {
  options: Map<string, { takesValue: boolean }>;
  subcommands: string[];
}

/** Reads commander's help text: the `Options:` and `Commands:` sections. */
export function parseHelp(text: string): CommandHelp {
  const options = new Map<string, { takesValue: boolean }>();
  const subcommands: string[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    if (/^\S.*:$/.test(line)) {
      section = line;
      continue;
    }
    if (section === 'Options:') {
      const option = /^ {2}(-\w)?(?:, )?(--[\w-]+)?( [<[][^>\]]*[>\]])?/.exec(line);
      if (!option || (!option[1] && !option[2])) continue;
      for (const name of [option[1], option[2]]) if (name) options.set(name, { takesValue: Boolean(option[3]) });
    } else if (section === 'Commands:') {
      const command = /^ {2}([a-z][\w-]*)/.exec(line);
      if (command && command[1] !== 'help') subcommands.push(command[1]!);
    }
  }
  return { options, subcommands };
}

/** Shell words of a script, split into simple commands at newlines, `;`, `&`, `|`, `&&` and `||`; comments dropped. */
export function splitShellCommands(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === '\\' && script[i + 1] === '\n') {
      i++;
    } else if (c === '\\') {
      word += script[++i] ?? '';
      inWord = true;
    } else if (c === "'" || c === '"') {
      const end = script.indexOf(c, i + 1);
      word += script.slice(i + 1, end < 0 ? script.length : end);
      inWord = true;
      i = end < 0 ? script.length : end;
    } else if (c === '#' && !inWord) {
      while (i < script.length && script[i] !== '\n') i++;
      endCommand();
    } else if (c === '\n' || c === ';' || c === '&' || c === '|') {
      endCommand();
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/**
 * Problems with the `runner` commands of a shell script: an unknown command,
 * or an option its `--help` does not list. `help` maps '' to the top-level
 * help, `run` to `runner run --help`, `runs show` to `runner runs show --help`.
 */
export function checkRunnerCommands(script: string, help: Map<string, CommandHelp>): string[] {
  const problems: string[] = [];
  const globals = help.get('')!;
  for (let words of splitShellCommands(script)) {
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words = words.slice(1);
    const start = words[0] === 'runner' ? 1 : words[0] === 'npx' && words[1] === 'runner' ? 2 : -1;
    if (start < 0) continue;
    const args = words.slice(start);
    const shown = words.join(' ');
    let i = 0;
    const takeOptions = (known: CommandHelp['options'], stopAtPositional: boolean) => {
      for (; i < args.length; i++) {
        const arg = args[i]!;
        if (arg === '--') return;
        if (!arg.startsWith('-') || arg === '-') {
          if (stopAtPositional) return;
          continue;
        }
        const name = arg.startsWith('--') ? arg.split('=')[0]! : arg.slice(0, 2);
        const option = known.get(name) ?? globals.options.get(name);
        if (!option) {
          problems.push(`\`${shown}\`: unknown option ${name}`);
          continue;
        }
        const inline = arg.startsWith('--') ? arg.includes('=') : arg.length > 2;
        if (option.takesValue && !inline) i++;
      }
    };
    takeOptions(globals.options, true);
    const command = args[i];
    if (command === undefined || command === 'help') continue;
    let own = help.get(command);
    if (!own) {
      problems.push(`\`${shown}\`: unknown command ${command}`);
      continue;
    }
    i++;
    const sub = args[i];
    if (sub !== undefined && own.subcommands.includes(sub)) {
      own = help.get(`${command} ${sub}`)!;
      i++;
    }
    takeOptions(own.options, false);
  }
  return problems;
}

/**
 * The lines of `expected` that no line of `actual` matches. Lines are
 * compared without trailing spaces; `…` in an expected line matches any
 * run of characters (none included); empty expected lines are ignored.
 */
export function findMissingLines(expected: string, actual: string): string[] {
  const actualLines = actual.split('\n').map((line) => line.trimEnd());
  return expected
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '')
    .filter((line) => {
      const pattern = new RegExp(`^${line.split('…').map(escapeRegExp).join('.*')}$`);
      return !actualLines.some((candidate) => pattern.test(candidate));
    });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
