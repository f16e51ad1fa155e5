import { DPOP_SUPPORTED_ALGS, DpopSession, generateDpopKeyPair, type DpopAlg } from '@modelcontextprotocol/client';
import type { JWK } from 'jose';
import type { DpopSetting } from '../config/types.js';

/** A DPoP key as the credentials file keeps it, beside the tokens bound to it. */
export interface StoredDpopKey {
  alg: DpopAlg;
  /** The private key (JWK): as secret as the refresh token it sits next to. */
  privateJwk: JWK;
  publicJwk: JWK;
  /** RFC 7638 thumbprint: the token's `cnf.jkt`. */
  thumbprint: string;
}

/** Whether a response's `WWW-Authenticate` offers the `DPoP` scheme (RFC 9449 §7.1). */
export function challengeNamesDpop(response: Response): boolean {
  if (response.status !== 401 && response.status !== 403) return false;
  return /(?:^|,)\s*dpop(?:\s|$|,)/i.test(response.headers.get('www-authenticate') ?? '');
}

/** Whether to sign token requests with a DPoP proof, given the setting and whether a challenge asked for it. */
export function wantsDpop(setting: DpopSetting, challenged: boolean): boolean {
  return setting === true || (setting === 'auto' && challenged);
}

/**
 * The algorithm to sign proofs with: ES256 unless the authorization server
 * lists others only, then the first of those the SDK can sign with.
 */
export function dpopAlgorithmFor(metadata: object | undefined): DpopAlg {
  const listed = (metadata as { dpop_signing_alg_values_supported?: unknown } | undefined)?.dpop_signing_alg_values_supported;
  if (!Array.isArray(listed) || listed.length === 0 || listed.includes('ES256')) return 'ES256';
  return (listed.find((alg): alg is DpopAlg => (DPOP_SUPPORTED_ALGS as readonly unknown[]).includes(alg)) ?? 'ES256');
}

/** A fresh key in a session, and the form to keep it in when tokens bound to it outlive the process. */
export async function createDpopKey(alg: DpopAlg): Promise<{ session: DpopSession; stored: StoredDpopKey }> {
  const keyPair = await generateDpopKeyPair({ alg, extractable: true });
  const { exportJWK } = await loadJose();
  const privateJwk = await exportJWK(keyPair.privateKey);
  const session = await DpopSession.create({ keyPair });
  return { session, stored: { alg, privateJwk, publicJwk: keyPair.publicJwk, thumbprint: keyPair.thumbprint } };
}

/** The session of a stored key, for the process that uses tokens another one obtained (a run after `runner auth login`). */
export async function restoreDpopSession(stored: StoredDpopKey): Promise<DpopSession> {
  const { importJWK } = await loadJose();
  const privateKey = (await importJWK(stored.privateJwk, stored.alg)) as CryptoKey;
  const publicKey = (await importJWK(stored.publicJwk, stored.alg, { extractable: true })) as CryptoKey;
  return DpopSession.create({ keyPair: { privateKey, publicKey, publicJwk: stored.publicJwk, thumbprint: stored.thumbprint, alg: stored.alg } });
}

/** jose takes tens of milliseconds to load: only a run that binds tokens pays for it. */
function loadJose(): Promise<typeof import('jose')> {
  return import('jose');
}
