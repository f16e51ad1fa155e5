import { systemClock, type Clock } from '../clock.js';
import type { AppAuth } from '../config/types.js';
import { CredentialsFile } from './credentials-file.js';

/** One app's authorization as `runner auth status` shows it: never a token or a secret. */
export interface AuthStatus {
  app: string;
  url: string;
  type: AppAuth['type'];
  /**
   * `logged-in`: tokens stored (an expired access token with a refresh token
   * is refreshed by the next run); `expired`: stored, but expired and not
   * refreshable; `not-logged-in`; `no-login`: client credentials and bearer
   * tokens need none.
   */
  state: 'logged-in' | 'expired' | 'not-logged-in' | 'no-login';
  /** When the access token expires (ISO 8601), when the server said. */
  expiresAt?: string;
  refreshable?: boolean;
  /** Scopes granted, as the authorization server reported them. */
  scopes?: string[];
  /** Scopes a server asked for (insufficient_scope) that the stored login lacks: the next login asks for them. */
  missingScopes?: string[];
  /** The client id runner uses (configured, or from dynamic registration). */
  clientId?: string;
  /** Where the tokens are (oauth). */
  credentialsFile?: string;
}

/** What `runner auth status` says about one app with `auth:`, from the config and the credentials file. */
export async function readAuthStatus(app: { name: string; url: string; auth: AppAuth }, clock: Clock = systemClock): Promise<AuthStatus> {
  const base = { app: app.name, url: app.url, type: app.auth.type };
  if (app.auth.type === 'bearer') return { ...base, state: 'no-login' };
  if (app.auth.type !== 'oauth') return { ...base, state: 'no-login', clientId: app.auth.clientId, ...(app.auth.scopes.length > 0 && { scopes: app.auth.scopes }) };
  const credentialsFile = app.auth.credentialsFile;
  const login = await new CredentialsFile(credentialsFile, clock).read(app.url, app.name);
  const clientId = app.auth.clientId ?? login?.client?.client_id;
  const tokens = login?.tokens;
  const granted = tokens?.scope?.split(/\s+/).filter(Boolean);
  const missing = login?.stepUpScope?.split(/\s+/).filter((scope) => scope && !granted?.includes(scope));
  const refreshable = tokens ? Boolean(tokens.refresh_token) : undefined;
  const expired = login?.expiresAt !== undefined && login.expiresAt <= clock.now();
  return {
    ...base,
    state: !tokens ? 'not-logged-in' : expired && !refreshable ? 'expired' : 'logged-in',
    ...(login?.expiresAt !== undefined && tokens && { expiresAt: new Date(login.expiresAt).toISOString() }),
    ...(refreshable !== undefined && { refreshable }),
    ...(granted && { scopes: granted }),
    ...(missing && missing.length > 0 && { missingScopes: missing }),
    ...(clientId && { clientId }),
    credentialsFile,
  };
}
