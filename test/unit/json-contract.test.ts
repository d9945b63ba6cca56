// The JSON contract's edge (issue 18): snake_case keys (data used as keys
// untouched), schema_version first, and the error document's `changed`.
import { describe, expect, it } from 'vitest';
import { jsonDocument, snakeCase, snakeKeys } from '../../src/cli/json-contract.js';
import { reportError } from '../../src/cli/report-error.js';
import { ReconcileError } from '../../src/errors.js';

describe('snake_case at the rendering edge', () => {
  it('converts camelCase identifiers, leaves data keys (resource classes, kinds, uuids) and values alone', () => {
    expect(snakeCase('hypervisorHostname')).toBe('hypervisor_hostname');
    expect(snakeCase('fromProviderUuid')).toBe('from_provider_uuid');
    expect(snakeCase('providerId')).toBe('provider_id');
    expect(snakeCase('CUSTOM_BAREMETAL_GOLD')).toBe('CUSTOM_BAREMETAL_GOLD');
    expect(snakeCase('VCPU')).toBe('VCPU');
    expect(snakeCase('unmapped-service')).toBe('unmapped-service');
    expect(snakeCase('already_done')).toBe('already_done');
    expect(snakeKeys({ toHost: 'myHost', allocations: [{ resourceClass: 'VCPU', used: 1 }], resources: { MEMORY_MB: 512 } })).toEqual({
      to_host: 'myHost',
      allocations: [{ resource_class: 'VCPU', used: 1 }],
      resources: { MEMORY_MB: 512 },
    });
  });

  it('puts schema_version first', () => {
    expect(Object.keys(jsonDocument({ changed: false, a: 1 }))).toEqual(['schema_version', 'changed', 'a']);
  });
});

describe('the error document', () => {
  const run = (err: unknown): { code: number; doc: Record<string, unknown> } => {
    let out = '';
    const ctx = { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => undefined }, env: {}, home: '/', cwd: '/', stderrIsTty: false, stdoutIsTty: false, stdoutColumns: undefined, maxRssKb: () => 0 };
    const code = reportError(err, { ctx, family: 'reconcile', debug: false, format: 'json' });
    return { code, doc: JSON.parse(out) as Record<string, unknown> };
  };

  it('says changed: false for a refusal, true when an apply had committed something before it failed', () => {
    expect(run(new ReconcileError('usage', 'bad'))).toEqual({ code: 127, doc: { schema_version: 1, changed: false, error: { kind: 'usage', message: 'bad', exit_code: 127 } } });
    const partly = run(new ReconcileError('connection', 'lost the connection', { hint: 'the journal lists what was committed', changed: true }));
    expect(partly.doc).toMatchObject({ schema_version: 1, changed: true, error: { kind: 'connection', exit_code: partly.code } });
    expect(run(new Error('boom')).doc).toMatchObject({ changed: false, error: { kind: 'internal', message: 'unexpected error: boom' } });
  });
});
