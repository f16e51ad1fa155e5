import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ProtocolError,
  ProtocolErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type PriorDiscovery,
  type ReadResourceResult,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
import type { AppConfig, SecretEntry } from '../config/types.js';
import { formatMs } from '../config/durations.js';
import { timerMs } from '../clock.js';
import { cutText } from '../terminal-text.js';
import { BoundedJsonSchemaValidator } from './bounded-validation.js';
import { MAX_APP_DATA_NESTING, nestsDeeperThan } from '../nesting.js';
import type { ConnectTransport } from './in-process-apps.js';
import { createStreamMasker, maskSecrets, type StreamMasker } from '../secrets.js';
import { classifyAuthFailure } from '../auth/auth-errors.js';
import { createTransportAuth } from '../auth/transport-auth.js';
import { CallError, classifyCallError, describeCauses } from './call-error.js';
import { CappedLog, DEFAULT_MAX_LOG_BYTES } from './capped-log.js';
import { createLimitedFetch } from './limited-fetch.js';
import { MessageTooLargeError } from './line-buffer.js';
import { trackChild, untrackChild } from './child-reaper.js';
import { isAlive, listDescendants, signalAll, signalGroup } from './process-tree.js';
import { AppStdioTransport } from './stdio-transport.js';
import { appProcessSpec, type EarlyAppProcess } from './app-process.js';
import { ElicitationRouter } from './elicitation-router.js';
import { callToolAsTask, explainTaskUnavailable, requiresTask } from './task-call.js';
import { planNegotiation, planRetry, watchForInitialize, type NegotiationPlan } from './negotiation.js';
import type { VerdictStore } from './verdicts.js';
import { ToolListBudget } from './tool-list-budget.js';
import { RunnerClient } from './runner-client.js';

export const CLIENT_INFO = { name: 'runner', version: '0.1.0' };

/** What the run record shows about a connected app. */
export interface AppInfo {
  protocolVersion: string | undefined;
  era: 'modern' | 'legacy' | undefined;
  server: { name: string; version: string } | undefined;
}

export interface AppConnectionOptions {
  app: AppConfig;
  /** Absolute artifacts folder: sent as RUNNER_ARTIFACTS to stdio apps. */
  artifacts: string;
  verdicts: VerdictStore;
  /** Where the app's stderr is appended. */
  logFile?: string;
  secretValues: readonly string[];
  /** The secrets the run store keeps by name; OAuth token values learned while connected are added to it (and to `secretValues`). */
  secretEntries?: readonly SecretEntry[];
  /**
   * Makes the transport instead of spawning or dialing the app: for in-process
   * servers (tests, embedding). Returning undefined starts or dials the app as
   * configured. Stdio and HTTP apps never need it.
   */
  connectTransport?: ConnectTransport;
  /** The stdio app's process, spawned already (EarlyApps): the first transport adopts it. */
  early?: EarlyAppProcess;
  /** Handshake timeout. @default 30000 */
  connectTimeoutMs?: number;
  signal?: AbortSignal;
  /** Told about what fails nothing but the user should know (an app that had to be signalled to stop). */
  onWarning?: (message: string) => void;
}

/** What a tool asked the user for, mid-call (form elicitation). */
export interface ElicitationRequest {
  message: string;
  /** JSON Schema of the requested fields: `properties`, `required`. */
  requestedSchema: { properties?: Record<string, unknown>; required?: string[] };
}

export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

export type ElicitationHandler = (request: ElicitationRequest) => Promise<ElicitationAnswer>;

export interface CallOptions {
  /** Answers the tool's questions for this call; without one, every question is declined. */
  onElicit?: ElicitationHandler;
  signal?: AbortSignal;
  /** Upper bound the SDK enforces; the executor enforces the real timeouts through its Clock. */
  timeoutMs?: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** Checks tool results against their outputSchema, each check against a schema with a `pattern` held to a time limit. */
const schemaValidator = new BoundedJsonSchemaValidator();

const STDERR_TAIL_LINES = 40;
/** Longest stderr line kept in the tail (the log file gets all of it). */
const STDERR_LINE_MAX_CHARS = 2_000;



/** The largest message an app may send, when its `max-result` says nothing. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

/** Starting an app, its handshake and its tool list, when its `connect-timeout` says nothing. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** The most characters of an app's name and of its version (`serverInfo`) kept: the run record, the lockfile and `runner tools` hold them. */
export const MAX_SERVER_INFO_CHARS = 200;

/**
 * One live connection to one app: a spawned stdio child or an HTTP session.
 * Tool discovery happens once and is cached for the life of the connection
 * (refreshed on `notifications/tools/list_changed`).
 */
export class AppConnection {
  readonly name: string;
  info: AppInfo = { protocolVersion: undefined, era: undefined, server: undefined };
  private closed = false;
  private closing: Promise<void> | undefined;
  private toolsByName: Map<string, Tool> | undefined;
  private toolsLoading: Promise<Map<string, Tool>> | undefined;
  private readonly stderrTail: string[] = [];
  private partialLine = '';
  private stderrMasker: StreamMasker | undefined;
  private oversize: MessageTooLargeError | undefined;
  private log: CappedLog | undefined;
  private pid: number | null = null;
  private readonly closeListeners = new Set<() => void>();
  private client!: RunnerClient;
  private readonly elicitation = new ElicitationRouter();
  private toolListBudget: ToolListBudget | undefined;
  private transport!: Transport;
  /** Whether `initialize` went out: a failure after it is the handshake's, not the probe's. */
  private initializeSent: () => boolean = () => false;

  private constructor(
    private readonly options: AppConnectionOptions,
    private readonly negotiation: NegotiationPlan,
  ) {
    this.name = options.app.name;
  }

  /**
   * Spawns or reaches the app, completes the handshake and lists its tools;
   * remembers the protocol verdict. A failure names the app and shows the
   * last lines of its stderr.
   */
  static async open(options: AppConnectionOptions): Promise<AppConnection> {
    const { app, verdicts } = options;
    const plan = planNegotiation(app, verdicts);
    const first = new AppConnection(options, plan);
    try {
      await first.start(plan.prior);
      return first;
    } catch (error) {
      await first.shutdown();
      if (options.signal?.aborted) throw await first.describeStartFailure(error);
      // A stale verdict, a 2025-era stdio server that exits on the in-place
      // `server/discover` probe, or an HTTP server that answered the probe with
      // an error, garbage or nothing: one more try, as plain legacy (or
      // re-probed, for a stale modern verdict over HTTP). A broken app fails the same way twice.
      const retry = planRetry(app, plan, error, first.initializeSent());
      if (!retry) throw await first.describeStartFailure(error);
      const retryPrior = retry.prior;
      verdicts.delete(app);
      // The early process (if any) was the first attempt's: the second spawns its own.
      const second = new AppConnection({ ...options, early: undefined }, { ...plan, prior: retryPrior });
      try {
        await second.start(retryPrior);
        if (retryPrior) verdicts.set(app, retryPrior);
        return second;
      } catch (retryError) {
        await second.shutdown();
        throw await second.describeStartFailure(retryError);
      }
    }
  }

  /** Connects and runs discovery: both must work, within the connect timeout, before the app counts as started. */
  private async start(prior: PriorDiscovery | undefined): Promise<void> {
    await this.connect(prior);
    await this.loadTools(this.options.signal, this.connectTimeoutMs);
  }

  private get connectTimeoutMs(): number {
    // The SDK sets a timer of this length: capped at what one Node timer holds.
    return timerMs(this.options.connectTimeoutMs ?? this.options.app.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  }

  get alive(): boolean {
    return !this.closed;
  }

  /** The last lines the app wrote to stderr (secrets masked). */
  recentStderr(lines = 10): string[] {
    const tail = this.partialLine ? [...this.stderrTail, this.partialLine] : this.stderrTail;
    return tail.slice(-lines);
  }

  /** Called once when the connection closes for any reason. */
  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  get capabilities() {
    return this.client.getServerCapabilities();
  }

  /** Every tool the app lists, all pages, cached for the life of the connection. */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    return [...(await this.loadTools(signal)).values()];
  }

  /** The tool from the list already loaded, without waiting; undefined when the list is not loaded or has no such tool. */
  cachedTool(name: string): Tool | undefined {
    return this.toolsByName?.get(name);
  }

  async getTool(name: string, signal?: AbortSignal): Promise<Tool | undefined> {
    return (await this.loadTools(signal)).get(name);
  }

  /** Calls a tool; throws CallError classified by kind and outcome. */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    if (this.closed) {
      throw new CallError('transport', `${this.name} is not running`, { outcome: 'not-sent' });
    }
    const elicitor = options.onElicit;
    const asTask = requiresTask(this.toolsByName?.get(name));
    if (asTask) {
      const unavailable = explainTaskUnavailable(this.name, name, this.info.era, this.capabilities);
      if (unavailable) throw new CallError('unavailable', unavailable, { outcome: 'not-sent' });
    }
    // The SDK's own request timer: one Node timer, so at most about 24.8 days;
    // a longer step timeout is still the runner's own deadline (the signal).
    const timeoutMs = timerMs(options.timeoutMs ?? 24 * 60 * 60 * 1000);
    try {
      const call = (meta?: Record<string, string>) =>
        asTask
          ? callToolAsTask(this.client, { name, arguments: args, ...(meta && { _meta: meta }) }, {
              signal: options.signal,
              timeoutMs,
              onprogress: options.onprogress,
            })
          : this.client.callTool(meta ? { name, arguments: args, _meta: meta } : { name, arguments: args }, {
              signal: options.signal,
              timeout: timeoutMs,
              onprogress: options.onprogress,
              resetTimeoutOnProgress: false,
            });
      const result = await (elicitor ? this.elicitation.run(elicitor, call) : call());
      if (nestsDeeperThan(result, MAX_APP_DATA_NESTING)) {
        throw new CallError('protocol', `the result from ${this.name} was refused: it nests deeper than ${MAX_APP_DATA_NESTING} levels (limit for data from apps)`, {
          refusedByLimit: true,
        });
      }
      return result;
    } catch (error) {
      if (this.oversize) {
        throw new CallError('transport', `${this.name}: ${this.oversize.message}; the call ran, its result was dropped (raise the app's max-result to accept it)`, {
          outcome: 'unknown',
          cause: error,
          refusedByLimit: true,
        });
      }
      throw this.classify(error, { signal: options.signal, sent: true });
    }
  }

  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    try {
      return await this.client.readResource({ uri }, { signal });
    } catch (error) {
      throw this.classify(error, { signal, sent: true });
    }
  }

  /** Ends the connection: end stdin → SIGTERM → SIGKILL, then the rest of the process tree. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async connect(prior: PriorDiscovery | undefined): Promise<void> {
    const { app } = this.options;
    const roots = app.roots;
    // The probe inherits the connect timeout: a slow server is not taken for a 2025 one (or, over HTTP, for a dead one).
    this.client = new RunnerClient(CLIENT_INFO, {
      ...this.negotiation.clientOptions,
      jsonSchemaValidator: schemaValidator,
      // No `sampling`: runner has no model. `applyDefaults`: an accepted answer gets the schema's defaults for fields left out.
      capabilities: { elicitation: { form: { applyDefaults: true } }, ...(roots === false ? {} : { roots: { listChanged: false } }) },
      listChanged: {
        // The list is marked stale the moment the app says it changed, and read again at the next
        // lookup. The app sends that notice before its answer, so the next step checks the tool it
        // calls (and runner.lock) against the new list; fetching it on the notice instead (after the
        // SDK's 300 ms debounce) let a step made sooner run on the old one, and let an app that keeps
        // announcing changes have its whole list fetched and parsed again and again.
        tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.forgetTools() },
      },
    });
    if (roots !== false) {
      this.client.setRequestHandler('roots/list', () => ({
        roots: roots.map((folder) => ({ uri: pathToFileURL(folder).href, name: folder })),
      }));
    }
    // A server that asks for sampling although runner declared no sampling capability gets a reason, not a bare "Method not found".
    this.client.fallbackRequestHandler = (request) => {
      const reason = request.method === 'sampling/createMessage' ? 'runner has no language model: sampling/createMessage is not supported (no sampling capability was declared)' : 'Method not found';
      return Promise.reject(new ProtocolError(ProtocolErrorCode.MethodNotFound, reason));
    };
    this.client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const params = request.params as { mode?: string; message: string; requestedSchema?: ElicitationRequest['requestedSchema']; _meta?: Record<string, unknown> };
      if (params.mode === 'url') return { action: 'decline' as const };
      const handler = this.elicitation.route(params, ctx.mcpReq.id);
      if (!handler) return { action: 'decline' as const };
      const answer = await handler({ message: params.message, requestedSchema: params.requestedSchema ?? {} });
      return answer.action === 'accept' ? { action: 'accept' as const, content: (answer.content ?? {}) as Record<string, string | number | boolean | string[]> } : { action: answer.action };
    });
    this.client.onclose = () => this.markClosed();
    // The transport drops a message over max-result and closes; remember why, so the failed call can say so.
    this.client.onerror = (error) => {
      if (error instanceof MessageTooLargeError) this.oversize = error;
    };
    this.transport = this.options.connectTransport?.(app, { artifacts: this.options.artifacts }) ?? this.createTransport();
    this.elicitation.tapSend(this.transport);
    this.toolListBudget = new ToolListBudget(app.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES);
    this.toolListBudget.tapSend(this.transport);
    this.initializeSent = watchForInitialize(this.transport);
    // The SDK's probe does not stop on the signal; closing the transport (the child process) does, so a runner
    // that shuts down while an app hangs in its handshake does not wait out the probe.
    const transport = this.transport;
    const onAbort = () => void transport.close().catch(() => undefined);
    this.options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await this.client.connect(transport, {
        prior,
        signal: this.options.signal,
        timeout: this.connectTimeoutMs,
      });
    } finally {
      this.options.signal?.removeEventListener('abort', onAbort);
    }
    this.elicitation.tapReceive(this.transport);
    this.toolListBudget.tapReceive(this.transport);
    const era = this.client.getProtocolEra();
    const server = this.client.getServerVersion();
    this.info = {
      protocolVersion: this.client.getNegotiatedProtocolVersion(),
      era,
      server: server ? { name: cutText(server.name, MAX_SERVER_INFO_CHARS), version: cutText(server.version, MAX_SERVER_INFO_CHARS) } : undefined,
    };
    if (!prior && this.negotiation.remember) {
      const discover = this.client.getDiscoverResult();
      this.options.verdicts.set(app, era === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' });
    }
  }

  private createTransport(): Transport {
    const { app, artifacts } = this.options;
    if (app.transport === 'sse') {
      // Legacy HTTP+SSE: results arrive on the long-lived GET stream, which max-result does not cut.
      const fetch = createLimitedFetch(app.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, (error) => (this.oversize = error));
      return new SSEClientTransport(new URL(app.url), {
        requestInit: { headers: app.headers },
        ...createTransportAuth(app, fetch, { secretValues: this.options.secretValues, secretEntries: this.options.secretEntries }),
      });
    }
    if (app.transport === 'http') {
      const fetch = createLimitedFetch(app.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, (error) => (this.oversize = error));
      return new StreamableHTTPClientTransport(new URL(app.url), {
        requestInit: { headers: app.headers },
        ...createTransportAuth(app, fetch, { secretValues: this.options.secretValues, secretEntries: this.options.secretEntries }),
        // A run never prompts: a scope a user must grant is reported (`runner auth login`); client credentials step up by themselves.
        onInsufficientScope: app.auth && app.auth.type !== 'oauth' && app.auth.type !== 'bearer' ? 'reauthorize' : 'throw',
      });
    }
    const transport = new AppStdioTransport({
      ...appProcessSpec(app, artifacts),
      early: this.options.early,
      maxMessageBytes: app.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      spoolDir: join(artifacts, '.runner', 'spool'),
      ...(app.stopTimeoutMs !== undefined && { closeStepMs: app.stopTimeoutMs }),
      onStopSignal: (signal, waitedMs) => this.noteStopSignal(signal, waitedMs, app.stopTimeoutMs !== undefined),
    });
    this.openLog();
    transport.onspawn = (pid) => {
      this.pid = pid;
      trackChild(pid);
    };
    transport.stderr.on('data', (chunk: Buffer) => this.captureStderr(chunk.toString('utf8')));
    return transport;
  }

  /**
   * The app did not exit in time as it was closed: a line in its log, and a
   * warning, which for SIGTERM comes only while the app has the default
   * stop-timeout (a stop-timeout set in the config says this is expected).
   */
  private noteStopSignal(signal: 'SIGTERM' | 'SIGKILL', waitedMs: number, configured: boolean): void {
    const waited = formatMs(waitedMs);
    const what =
      signal === 'SIGTERM'
        ? `did not exit within ${waited} of its stdin closing; runner sent it SIGTERM`
        : `did not exit within ${waited} of SIGTERM either; runner killed it (SIGKILL)`;
    this.log?.write(`${this.partialLine ? '\n' : ''}(runner: the app ${what})\n`);
    if (signal === 'SIGKILL' || !configured) {
      const hint = signal === 'SIGTERM' ? ` (if it never exits on its own, a shorter \`stop-timeout\` for it in the config ends this wait sooner)` : '';
      this.options.onWarning?.(`app \`${this.name}\` ${what}${hint}`);
    }
  }

  private captureStderr(text: string): void {
    // An app may write a secret in pieces (`sk-12`, then `34`): the stream
    // masker holds back a tail that could be the start of one until it knows.
    this.stderrMasker ??= createStreamMasker(this.options.secretValues);
    this.appendStderr(this.stderrMasker.push(text));
  }

  /** Adds masked stderr text to the log file and the tail of the last lines. */
  private appendStderr(masked: string): void {
    if (masked.length === 0) return;
    this.log?.write(masked);
    // Only the new text is split, and a line is kept up to STDERR_LINE_MAX_CHARS:
    // an app writing 100 MB without a newline must not be re-split on every chunk.
    const lines = masked.split('\n');
    const rest = lines.pop() ?? '';
    for (const [index, line] of lines.entries()) {
      this.stderrTail.push(clipLine(index === 0 ? this.partialLine + line : line));
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    }
    this.partialLine = clipLine(lines.length === 0 ? this.partialLine + rest : rest);
  }

  /** The per-run log file exists from the start, even while the app has said nothing. */
  private openLog(): void {
    if (!this.options.logFile || this.log) return;
    const log = new CappedLog(this.options.logFile, this.options.app.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES, (error) => {
      if (this.log === log) this.log = undefined;
      this.stderrTail.push(`(runner: the log ${this.options.logFile} stopped: ${error.code ?? error.message})`);
    });
    this.log = log;
  }

  /** The app said its tools changed: the list loaded (or on its way) is not used again. */
  private forgetTools(): void {
    this.toolsByName = undefined;
    this.toolsLoading = undefined;
  }

  private async loadTools(signal?: AbortSignal, timeoutMs?: number): Promise<Map<string, Tool>> {
    if (this.toolsByName) return this.toolsByName;
    if (this.toolsLoading) return this.toolsLoading;
    const loading: Promise<Map<string, Tool>> = this.client
      .listTools(undefined, timeoutMs === undefined ? { signal } : { signal, timeout: timeoutMs })
      .then((result) => {
        if (nestsDeeperThan(result.tools, MAX_APP_DATA_NESTING)) {
          throw new CallError('protocol', `the tool list of ${this.name} was refused: it nests deeper than ${MAX_APP_DATA_NESTING} levels (limit for data from apps)`);
        }
        const tools = new Map(result.tools.map((tool) => [tool.name, tool]));
        // Kept only if no change was announced while it was on its way (forgetTools dropped `loading`).
        if (this.toolsLoading === loading) this.toolsByName = tools;
        return tools;
      })
      .catch((error: unknown) => {
        const refused = this.toolListBudget?.refused;
        if (refused) throw new CallError('protocol', `the tool list of ${this.name} was refused: ${refused}`, { refusedByLimit: true, cause: error });
        throw this.classify(error, { signal, sent: true });
      })
      .finally(() => {
        if (this.toolsLoading === loading) this.toolsLoading = undefined;
      });
    this.toolsLoading = loading;
    return loading;
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners) listener();
    this.closeListeners.clear();
  }

  /** Builds the error for an app that could not be started, with its last stderr lines. */
  /** classifyCallError, with authorization failures (HTTP 401/403, no usable token) told apart first: `unavailable`, never a lost connection. */
  private classify(error: unknown, context: { signal?: AbortSignal; sent: boolean }): CallError {
    return classifyAuthFailure(error, this.options.app) ?? classifyCallError(error, { app: this.name, ...context });
  }

  private async describeStartFailure(error: unknown): Promise<Error> {
    // Refused for want of authorization: the server is running, and the message says what to do instead.
    const denied = classifyAuthFailure(error, this.options.app);
    if (denied) return denied;
    // Give the stderr pipe a moment to deliver what the child printed as it died.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { app, secretValues } = this.options;
    const reason = maskSecrets(this.oversize ? `${this.oversize.message} (max-result)` : describeCauses(error), secretValues);
    if (app.transport !== 'stdio') {
      return new CallError('unavailable', `app \`${this.name}\` could not be reached at ${app.url}: ${reason} (is the server running?)`, {
        outcome: 'not-sent',
        cause: error,
      });
    }
    const tail = this.recentStderr(10);
    const detail = tail.length > 0 ? `\n  last stderr lines:\n${tail.map((line) => `    ${line}`).join('\n')}` : '';
    const command = [app.command, ...app.args].join(' ');
    return new CallError('unavailable', `app \`${this.name}\` (\`${command}\`) failed to start: ${reason}${detail}`, {
      outcome: 'not-sent',
      cause: error,
    });
  }

  private async shutdown(): Promise<void> {
    const pid = this.pid;
    const descendants = pid ? listDescendants(pid) : [];
    try {
      // End stdin → SIGTERM → SIGKILL for the app itself.
      await this.client?.close();
    } catch {
      // Closing a broken connection may throw; the process cleanup below still runs.
    }
    if (pid) {
      // Then the rest of its tree: its process group, and any descendant that left the group.
      const leftovers = descendants.filter(isAlive);
      if (signalGroup(pid, 'SIGTERM') || leftovers.length > 0) {
        signalAll(leftovers, 'SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 100));
        signalGroup(pid, 'SIGKILL');
        signalAll(leftovers.filter(isAlive), 'SIGKILL');
      }
      untrackChild(pid);
    }
    this.markClosed();
    // What the masker still holds (the end of the last line) belongs in the log and the tail too.
    if (this.stderrMasker) this.appendStderr(this.stderrMasker.end());
    await this.log?.end();
  }
}


/** A stderr line as the tail keeps it: its start, where the message usually is. */
function clipLine(line: string): string {
  return line.length > STDERR_LINE_MAX_CHARS ? line.slice(0, STDERR_LINE_MAX_CHARS) : line;
}
