import { describe, expect, it } from 'vitest';
import { challengeNamesDpop, createDpopKey, dpopAlgorithmFor, restoreDpopSession, wantsDpop } from '../../src/auth/dpop.js';
import { checkDpopProof } from '../servers/dpop-proof.js';

const challenge = (status: number, header: string) => new Response(null, { status, headers: { 'www-authenticate': header } });

describe('DPoP keys and choices', () => {
  it('reads a DPoP challenge only from a 401 or 403 that names the scheme', () => {
    expect(challengeNamesDpop(challenge(401, 'DPoP algs="ES256", resource_metadata="https://x/.well-known/oauth-protected-resource"'))).toBe(true);
    expect(challengeNamesDpop(challenge(401, 'Bearer realm="x", DPoP algs="ES256"'))).toBe(true);
    expect(challengeNamesDpop(challenge(401, 'Bearer error="invalid_token", error_description="not a DPoP proof"'))).toBe(false);
    expect(challengeNamesDpop(challenge(200, 'DPoP algs="ES256"'))).toBe(false);
  });

  it('binds tokens for true always, for auto only when challenged, for false never', () => {
    expect([wantsDpop(true, false), wantsDpop('auto', false), wantsDpop('auto', true), wantsDpop(false, true)]).toEqual([true, false, true, false]);
  });

  it('signs with ES256 unless the authorization server lists only other algorithms it can sign with', () => {
    expect(dpopAlgorithmFor(undefined)).toBe('ES256');
    expect(dpopAlgorithmFor({ dpop_signing_alg_values_supported: ['RS256', 'ES256'] })).toBe('ES256');
    expect(dpopAlgorithmFor({ dpop_signing_alg_values_supported: ['HS256', 'PS256'] })).toBe('PS256');
    expect(dpopAlgorithmFor({ dpop_signing_alg_values_supported: ['HS256'] })).toBe('ES256');
  });

  it('a stored key, restored in another process, signs proofs with the same thumbprint', async () => {
    const { session, stored } = await createDpopKey('ES256');
    const copy = JSON.parse(JSON.stringify(stored)) as typeof stored;
    expect(copy.privateJwk.d).toBeTruthy();
    expect(copy.publicJwk.d).toBeUndefined();
    const restored = await restoreDpopSession(copy);
    expect(restored.thumbprint).toBe(session.thumbprint);
    const url = 'https://mcp.example.com/mcp?x=1';
    const proof = await restored.buildProof({ htm: 'POST', htu: url, accessToken: 'token-123' });
    const checked = await checkDpopProof(proof, { method: 'POST', url, accessToken: 'token-123' });
    expect(checked.jkt).toBe(stored.thumbprint);
    await expect(checkDpopProof(proof, { method: 'POST', url, accessToken: 'another-token' })).rejects.toThrow('ath does not match');
  });
});
