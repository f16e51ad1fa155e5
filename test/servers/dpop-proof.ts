// Checks a DPoP proof (RFC 9449 §4.3) the way an authorization server or a
// protected resource does, for the test servers.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';

export interface CheckedProof {
  /** The thumbprint of the key that signed the proof: what a bound token's `cnf.jkt` must be. */
  jkt: string;
  jti: string;
  nonce?: string;
}

/**
 * Verifies `proof` for a request: `typ`, an asymmetric `alg`, a public `jwk`
 * that verifies the signature, `htm`/`htu` of this request, a recent `iat`,
 * and with `accessToken` the `ath` hash. Throws with the reason.
 */
export async function checkDpopProof(proof: string | undefined, request: { method: string; url: string; accessToken?: string }): Promise<CheckedProof> {
  if (!proof) throw new Error('no DPoP proof');
  const header = decodeProtectedHeader(proof);
  if (header.typ !== 'dpop+jwt') throw new Error('typ is not dpop+jwt');
  if (!header.alg || header.alg.startsWith('HS') || header.alg === 'none') throw new Error('not an asymmetric alg');
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || 'd' in jwk) throw new Error('no public jwk');
  const { payload } = await jwtVerify(proof, await importJWK(jwk, header.alg));
  const target = new URL(request.url);
  if (payload.htm !== request.method) throw new Error(`htm ${String(payload.htm)} is not ${request.method}`);
  if (payload.htu !== `${target.origin}${target.pathname}`) throw new Error(`htu ${String(payload.htu)} is not ${target.origin}${target.pathname}`);
  if (typeof payload.iat !== 'number' || Math.abs(Date.now() / 1000 - payload.iat) > 300) throw new Error('iat out of range');
  if (typeof payload.jti !== 'string') throw new Error('no jti');
  if (request.accessToken !== undefined && payload.ath !== createHash('sha256').update(request.accessToken).digest('base64url')) throw new Error('ath does not match the token');
  return { jkt: await calculateJwkThumbprint(jwk, 'sha256'), jti: payload.jti, ...(typeof payload.nonce === 'string' && { nonce: payload.nonce }) };
}
