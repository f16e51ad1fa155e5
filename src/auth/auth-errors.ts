import {
  AuthorizationServerMismatchError,
  InsecureTokenEndpointError,
  InsufficientScopeError,
  IssuerMismatchError,
  OAuthError,
  RegistrationRejectedError,
  SdkHttpError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { CallError } from '../apps/call-error.js';
import type { AppAuth } from '../config/types.js';
import { RunnerError } from '../errors.js';

/** Why a headless run cannot get a usable token without someone logging in. */
export type LoginReason = 'not-logged-in' | 'rejected' | 'expired';

/**
 * Thrown by the stored-token provider where the SDK would send the user to
 * the authorization server: a run never prompts, so the app needs a login.
 */
export class LoginRequiredError extends Error {
  constructor(
    readonly reason: LoginReason,
    message: string,
  ) {
    super(message);
    this.name = 'LoginRequiredError';
  }
}

/**
 * A call or connection refused for want of authorization: HTTP 401 or 403,
 * no usable token, a scope the token lacks. Always `unavailable` and never
 * sent: the server refused it at the door.
 */
export class AuthError extends CallError {
  constructor(message: string, cause: unknown) {
    super('unavailable', message, { outcome: 'not-sent', cause });
  }
}

/** What an app needs to describe a refusal: its name and its `auth:`. */
export interface AuthSubject {
  name: string;
  auth?: AppAuth;
}

/**
 * An AuthError for whatever authorization failure `error` is (or has as a
 * cause), or undefined when it is something else. Says what to do for the
 * app's auth type: log in, fix the token, add `auth:`, ask for a scope.
 */
export function classifyAuthFailure(error: unknown, app: AuthSubject): AuthError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause) {
    const message = describe(current, app);
    if (message) return current instanceof AuthError ? current : new AuthError(message, error);
  }
  return undefined;
}

function describe(error: Error, app: AuthSubject): string | undefined {
  const named = `app \`${app.name}\``;
  const login = `run \`runner auth login ${app.name}\``;
  if (error instanceof AuthError) return error.message;
  if (error instanceof LoginRequiredError) return `${named} ${error.message}; ${login}`;
  if (error instanceof InsufficientScopeError) return describeMissingScope(error.requiredScope, app);
  if (error instanceof UnauthorizedError) return `${named} requires authorization (HTTP 401); ${fixFor(app, 401)}`;
  if (error instanceof SdkHttpError && error.status === 403 && oauthErrorCode(error.data.text) === 'insufficient_scope') return describeMissingScope(undefined, app);
  if (error instanceof SdkHttpError && (error.status === 401 || error.status === 403)) {
    const what = error.status === 401 ? 'requires authorization (HTTP 401)' : 'denied access (HTTP 403)';
    return `${named} ${what}; ${fixFor(app, error.status)}`;
  }
  if (error instanceof OAuthError) {
    return `the authorization server of ${named} refused: ${error.code}${error.message && error.message !== error.code ? ` (${error.message})` : ''}; ${fixFor(app, 401)}`;
  }
  if (error instanceof IssuerMismatchError || error instanceof AuthorizationServerMismatchError) {
    return `${named}: the authorization server is not the one its credentials belong to (${error.message}); ${login} again`;
  }
  if (error instanceof InsecureTokenEndpointError) return `${named}: refusing to send credentials to ${error.tokenEndpoint}, which is neither https nor loopback`;
  if (error instanceof RegistrationRejectedError) {
    return `the authorization server of ${named} refused to register runner as a client (HTTP ${error.status}); configure a registered client with \`auth.client-id\``;
  }
  if (error instanceof RunnerError && isCredentialsFileError(error)) return `${named}: ${error.message}${error.hint ? ` (${error.hint})` : ''}`;
  return undefined;
}

/** "needs scope `notes.write`, which its token does not grant", with what to do about it. */
function describeMissingScope(scope: string | undefined, app: AuthSubject): string {
  const needs = scope ? `needs scope \`${scope}\`` : 'needs a wider scope';
  const named = `app \`${app.name}\``;
  switch (app.auth?.type) {
    case 'oauth':
      return `${named} ${needs}, which its stored login does not grant (HTTP 403 insufficient_scope); run \`runner auth login ${app.name}\` to grant it`;
    case 'client-credentials':
    case 'workload-identity':
    case 'enterprise-managed':
      return `${named} ${needs}, which the authorization server did not grant to client \`${app.auth.clientId}\` (HTTP 403 insufficient_scope)`;
    case 'bearer':
      return `${named} ${needs}, which its bearer token does not grant (HTTP 403 insufficient_scope)`;
    default:
      return `${named} ${needs} (HTTP 403 insufficient_scope); give it \`auth: { type: oauth }\` and run \`runner auth login ${app.name}\``;
  }
}

/** What to do about a 401 or 403, by auth type. */
function fixFor(app: AuthSubject, status: number): string {
  switch (app.auth?.type) {
    case 'oauth':
      return `run \`runner auth login ${app.name}\``;
    case 'client-credentials':
      return `check \`auth.client-id\` and \`auth.${app.auth.privateKey === undefined ? 'client-secret' : 'private-key'}\` (and \`auth.scopes\`) of app \`${app.name}\``;
    case 'workload-identity':
      return `check \`auth.client-id\` and the workload's JWT (\`auth.${'file' in app.auth.assertion ? 'assertion-file' : 'assertion'}\`: expired, or for another audience?) of app \`${app.name}\``;
    case 'enterprise-managed':
      return `check \`auth.client-id\`, \`auth.client-secret\` and the user's ID token (\`auth.${'file' in app.auth.idToken ? 'id-token-file' : 'id-token'}\`: an ID token expires) of app \`${app.name}\``;
    case 'bearer':
      return status === 401 ? `the server rejected the token in \`auth.token\` of app \`${app.name}\`` : `the token in \`auth.token\` of app \`${app.name}\` is not allowed this`;
    default:
      return `give app \`${app.name}\` an \`auth:\` in runner.config.yaml (type oauth, client-credentials or bearer); for oauth, then run \`runner auth login ${app.name}\``;
  }
}

/** The `error` of an OAuth error body (`{"error":"insufficient_scope"}`), if the text is one. */
function oauthErrorCode(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/** A failure to read or write the credentials file (CredentialsFile says so in `details`). */
function isCredentialsFileError(error: RunnerError): boolean {
  return typeof error.details === 'object' && error.details !== null && 'credentialsFile' in error.details;
}
