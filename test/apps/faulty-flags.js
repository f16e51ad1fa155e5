// Command-line flags of the faulty fixture server (see faulty.js for what each one does).

const BOOLEAN_FLAGS = {
  '--junk-stdout': 'junkStdout',
  '--fail-handshake': 'failHandshake',
  '--crash-on-start': 'crashOnStart',
  '--never-answer': 'neverAnswer',
  '--ignore-sigterm': 'ignoreSigterm',
  '--ignore-stdin-close': 'ignoreStdinClose',
  '--legacy-only': 'legacyOnly',
};

const VALUE_FLAGS = {
  '--slow-start': 'slowStartMs',
  '--spawn-grandchild': 'grandchildPidFile',
  '--counter': 'counterFile',
  '--state': 'stateDir',
  '--name': 'name',
  '--pid-file': 'pidFile',
  '--stderr-flood': 'stderrFloodBytes',
};

/** Parse argv into an options object; throws with a message naming the bad flag. */
export function parseFaultyFlags(argv) {
  const options = { name: 'faulty', slowStartMs: 0 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? argv[i].split(/=(.*)/s, 2) : [argv[i], undefined];
    if (flag in BOOLEAN_FLAGS && inline === undefined) {
      options[BOOLEAN_FLAGS[flag]] = true;
      continue;
    }
    if (!(flag in VALUE_FLAGS)) {
      throw new Error(`Unknown argument \`${argv[i]}\`; expected one of ${[...Object.keys(BOOLEAN_FLAGS), ...Object.keys(VALUE_FLAGS)].join(', ')}`);
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new Error(`Expected a value after \`${flag}\``);
    options[VALUE_FLAGS[flag]] = value;
  }
  const ms = Number(options.slowStartMs);
  if (!Number.isInteger(ms) || ms < 0) {
    throw new Error(`Expected \`--slow-start\` to be a whole number of milliseconds from 0 and up, got \`${options.slowStartMs}\``);
  }
  options.slowStartMs = ms;
  return options;
}
