#!/usr/bin/env node
// Fixture MCP server (stdio) that misbehaves on request, for the runner's fault tests.
//
//   node test/apps/faulty.js [flags]
//
// Process flags (combine freely):
//   --junk-stdout          non-JSON-RPC lines on stdout at start and after every message sent
//   --slow-start MS        wait MS before serving (stdin is buffered meanwhile)
//   --fail-handshake       on the first bytes of stdin: stderr `faulty: refusing handshake`, exit(3)
//   --crash-on-start       stderr `faulty: boom at startup`, exit(1) at once
//   --never-answer         read stdin, answer nothing (exits when stdin closes)
//   --ignore-sigterm       ignore SIGTERM and SIGINT (still exits when stdin closes ...)
//   --ignore-stdin-close   ... unless this too: keeps running after stdin ends (stderr `faulty: stdin ended; staying up`); only SIGKILL stops it
//   --spawn-grandchild F   spawn `node -e "setInterval(()=>{},1e9)"` (plain child, stdio ignored) and
//                          append its pid as a line to F; a client's version probe spawns one too
//   --legacy-only          serve only the 2025 protocol (McpServer + StdioServerTransport, no
//                          serveStdio: `server/discover` is Method not found); default: both eras
//   --counter FILE         where side-effecting tools append one line per execution
//   --state DIR            folder for marker files (crash_once)
//   --name NAME            server name (default `faulty`)
//   --pid-file FILE        append this process's pid as a line to FILE at start
//   --stderr-flood BYTES   before serving, write BYTES of stderr without a newline (`#…#\r` chunks), then `faulty: flood done`
//
// Tools (RO read-only, I idempotent; all openWorldHint false, destructiveHint false):
//   echo {text?, delayMs?}             RO I   text + structuredContent {text}; no I/O on this path
//   big {bytes}                        RO I   one text block of `bytes` x characters (result size limits)
//   bigImage {bytes}                   RO I   one image/png block of `bytes` deterministic bytes (byte i = (i*31+7)&255), base64
//   work {delayMs?, label?, gate?}            appends `label` to the counter, waits (delayMs, then until file `gate` exists), → {count}
//   crash {delayMs?, afterSideEffect?}        (appends `crash`), waits, exit(1): never answers
//   crash_once {}                         I   first call creates <state>/crashed and exits; then {recovered: true}
//   hang {}                            RO I   never answers; settles only when the client cancels
//   gate {path}                        RO I   answers once the file `path` exists, leaving `<path>.passed` (a step a test ends when it wants)
//   slow {ms, progressEveryMs?}        RO I   answers after ms; progress notifications on the call's token
//   fail {message?}                    RO I   isError: true result
//   rpc_error {code?, pad?}            RO I   JSON-RPC error response (ProtocolError), default -32603; pad: that many more characters of message
//   lie_delete {}                      "RO"   claims readOnlyHint: true, appends `deleted` to the counter
//   no_annotations {}                         no annotations: spec defaults apply
//   purge {label?}                     D      destructiveHint: true; appends `purge <label>` to the counter
//   ask_name {}                        RO     form elicitation for {name} → `hello <name>` | declined | cancelled
//   ask_many {count?, pad?}            RO     `count` form elicitations at once, messages padded by `pad` characters → each one's action
//   image {}                           RO I   image block + resource_link (faulty://files/report.txt) + PDF blob
//   concurrent {delayMs?, gate?}       RO I   waits (as work); appends `start <ms> <in-flight>` to the counter: the peak in flight, measured here
import { main } from './faulty-main.js';

await main();
