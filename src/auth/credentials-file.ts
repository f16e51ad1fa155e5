import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { systemClock, type Clock } from '../clock.js';
import { RunnerError } from '../errors.js';
import { writeFileAtomic } from '../artifacts/atomic-file.js';
import type { StoredDpopKey } from './dpop.js';

/** What runner keeps for one app: its client registration and its tokens. */
export interface StoredLogin {
  /** A client registered dynamically (or a client ID metadata document URL); a configured client id is never stored. */
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  /** When the access token expires, ms since the epoch (from `expires_in` when it was saved). */
  expiresAt?: number;
  /** When the tokens were saved, ms since the epoch. */
  savedAt?: number;
  /** Scopes `insufficient_scope` challenges asked for (step-up): every later login asks for them too, beside the config's. */
  stepUpScope?: string;
  /** The key the tokens are bound to (DPoP), when the authorization server issued DPoP-bound tokens. */
  dpopKey?: StoredDpopKey;
}

/** The file as written: logins by server URL, then by app name. */
interface CredentialsDocument {
  version: 1;
  servers: Record<string, Record<string, StoredLogin>>;
}

/** A lock older than this was left by a process that died while writing. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 10_000;
const LOCK_POLL_MS = 25;

/**
 * The per-user credentials file: JSON, mode 0600 in a 0700 folder, keyed by
 * server URL and app name. Every change re-reads the file under a lock file
 * and replaces it atomically (temp file + rename), so two runner processes
 * refreshing tokens at once do not lose each other's tokens.
 */
export class CredentialsFile {
  constructor(
    readonly path: string,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The stored login of `app` at `url`, if any. */
  async read(url: string, app: string): Promise<StoredLogin | undefined> {
    const document = await this.load();
    return document.servers[url]?.[app];
  }

  /** Every stored login, as [url, app, login]. */
  async list(): Promise<[string, string, StoredLogin][]> {
    const document = await this.load();
    return Object.entries(document.servers).flatMap(([url, apps]) => Object.entries(apps).map(([app, login]): [string, string, StoredLogin] => [url, app, login]));
  }

  /** Replaces the login of `app` at `url` by what `change` returns (undefined deletes it); returns the new login. */
  async update(url: string, app: string, change: (login: StoredLogin | undefined) => StoredLogin | undefined): Promise<StoredLogin | undefined> {
    return this.withLock(async () => {
      const document = await this.load();
      const apps = { ...document.servers[url] };
      const next = change(apps[app]);
      if (next === undefined) delete apps[app];
      else apps[app] = next;
      const servers = { ...document.servers };
      if (Object.keys(apps).length === 0) delete servers[url];
      else servers[url] = apps;
      this.write({ version: 1, servers });
      return next;
    });
  }

  private async load(): Promise<CredentialsDocument> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
      throw this.unreadable(error);
    }
    try {
      const data = JSON.parse(text) as Partial<CredentialsDocument>;
      if (typeof data !== 'object' || data === null || typeof data.servers !== 'object' || data.servers === null) throw new Error('no `servers` mapping');
      return { version: 1, servers: data.servers };
    } catch (error) {
      throw this.unreadable(error);
    }
  }

  private unreadable(error: unknown): RunnerError {
    return new RunnerError('storage', `cannot read the credentials file ${this.path}: ${(error as Error).message}`, {
      hint: 'delete it and log in again with `runner auth login APP`',
      details: { credentialsFile: this.path },
      cause: error,
    });
  }

  private write(document: CredentialsDocument): void {
    try {
      // Created 0600 from the start: the tokens are never readable by others, not even for a moment.
      writeFileAtomic(this.path, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600, folderMode: 0o700, durable: true });
    } catch (error) {
      const reason = error instanceof RunnerError && error.cause instanceof Error ? error.cause.message : (error as Error).message;
      throw new RunnerError('storage', `cannot write the credentials file ${this.path}: ${reason}`, { details: { credentialsFile: this.path }, cause: error });
    }
  }

  private async withLock<T>(work: () => Promise<T>): Promise<T> {
    const lock = `${this.path}.lock`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const deadline = this.clock.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await (await open(lock, 'wx', 0o600)).close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(lock).then((info) => this.clock.now() - info.mtimeMs, () => 0);
        if (age > STALE_LOCK_MS) await rm(lock, { force: true });
        else if (this.clock.now() > deadline) throw new RunnerError('storage', `the credentials file ${this.path} stays locked by another runner process`, { hint: `if none is running, delete ${lock}`, details: { credentialsFile: this.path } });
        else await this.clock.sleep(LOCK_POLL_MS);
      }
    }
    try {
      return await work();
    } finally {
      await rm(lock, { force: true });
    }
  }
}
