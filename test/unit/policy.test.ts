import { describe, expect, it } from 'vitest';
import type { PolicyConfig } from '../../src/config/types.js';
import { decidePolicy, matchesGlob, readToolHints, resolveAsk } from '../../src/scheduler/policy.js';

const defaults: PolicyConfig = { readOnly: 'allow', destructive: 'ask', other: 'allow', openWorld: 'allow', headlessAsk: 'deny', approvalTimeoutMs: 86_400_000, rules: [] };

describe('readToolHints', () => {
  it('applies the spec defaults to a tool without annotations', () => {
    expect(readToolHints({})).toEqual({ readOnly: false, destructive: true, idempotent: false, openWorld: true });
  });
  it('treats a read-only tool as neither destructive nor unsafe to repeat', () => {
    expect(readToolHints({ annotations: { readOnlyHint: true, destructiveHint: true } })).toEqual({
      readOnly: true,
      destructive: false,
      idempotent: true,
      openWorld: true,
    });
  });
});

describe('decidePolicy', () => {
  const local = { openWorldHint: false };
  it('decides by annotation class', () => {
    expect(decidePolicy('a.read', readToolHints({ annotations: { readOnlyHint: true, ...local } }), defaults).action).toBe('allow');
    expect(decidePolicy('a.write', readToolHints({ annotations: { destructiveHint: false, ...local } }), defaults).action).toBe('allow');
    expect(decidePolicy('a.drop', readToolHints({ annotations: { destructiveHint: true, ...local } }), defaults)).toEqual({ action: 'ask', reason: 'destructive' });
  });
  it('gates open-world tools by the stricter of class and open-world', () => {
    const policy = { ...defaults, openWorld: 'deny' as const };
    expect(decidePolicy('web.fetch', readToolHints({ annotations: { readOnlyHint: true } }), policy)).toEqual({ action: 'deny', reason: 'read-only, open-world' });
  });
  it('lets the first matching rule win over lying annotations', () => {
    const policy: PolicyConfig = { ...defaults, rules: [{ match: 'sheet.delete_*', action: 'deny' }, { match: 'sheet.*', action: 'allow' }] };
    const liar = readToolHints({ annotations: { readOnlyHint: true, ...local } });
    expect(decidePolicy('sheet.delete_sheet', liar, policy)).toEqual({ action: 'deny', reason: 'rule sheet.delete_*' });
    expect(decidePolicy('sheet.write_range', readToolHints({}), policy).action).toBe('allow');
  });
});

describe('resolveAsk', () => {
  const ask = { action: 'ask' as const, reason: 'destructive' };
  it('denies an ask when nobody can be asked', () => {
    expect(resolveAsk('sheet.drop', ask, { yes: false, allow: [], interactive: false })).toMatchObject({ action: 'deny' });
  });
  it('allows with --yes or a matching --allow glob, and prompts on a TTY', () => {
    expect(resolveAsk('sheet.drop', ask, { yes: true, allow: [], interactive: false })).toMatchObject({ action: 'allow' });
    expect(resolveAsk('sheet.drop', ask, { yes: false, allow: ['sheet.*'], interactive: false })).toMatchObject({ action: 'allow' });
    expect(resolveAsk('sheet.drop', ask, { yes: false, allow: ['image.*'], interactive: true })).toBe('prompt');
  });
  it('with headless-ask: wait, keeps a headless ask as ask (the step waits); --yes, --allow and a TTY still come first', () => {
    const wait = { yes: false, allow: [], interactive: false, headless: 'wait' as const };
    expect(resolveAsk('sheet.drop', ask, wait)).toEqual({ action: 'ask', reason: 'destructive; waits for `runner approve` (headless-ask: wait)' });
    expect(resolveAsk('sheet.drop', ask, { ...wait, allow: ['sheet.*'] })).toMatchObject({ action: 'allow' });
    expect(resolveAsk('sheet.drop', ask, { ...wait, interactive: true })).toBe('prompt');
    expect(resolveAsk('sheet.drop', { action: 'deny', reason: 'rule sheet.*' }, wait)).toMatchObject({ action: 'deny' });
  });
});

describe('matchesGlob', () => {
  it('matches * and ? and escapes the rest', () => {
    expect(matchesGlob('sheet.*', 'sheet.read_range')).toBe(true);
    expect(matchesGlob('sheet.*', 'sheetX.read')).toBe(false);
    expect(matchesGlob('*.delete_?', 'a.delete_x')).toBe(true);
    expect(matchesGlob('a+b.*', 'a+b.c')).toBe(true);
  });
});
