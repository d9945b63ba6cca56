// The --ironic-nodes parser: every accepted shape, and one clear line for
// every refused one.
import { describe, expect, it } from 'vitest';
import { isUuid, parseIronicNodes } from '../../src/domain/ironic-nodes.js';
import { ReconcileError } from '../../src/errors.js';

const A = 'a646aa43-4e0b-4f0d-8b12-aa88157783d0';
const B = '57714aaa-ae8c-4f99-9593-c6b6b8e45a8e';
const I = 'db591e1b-0a29-4d0d-a575-1afcf1c6c532';

function fails(text: string): ReconcileError {
  try {
    parseIronicNodes(text, 'nodes.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ReconcileError);
    return err as ReconcileError;
  }
  throw new Error('expected the parser to refuse the input');
}

describe('parseIronicNodes: accepted input', () => {
  it('reads `openstack baremetal node list -f json` (title-case columns)', () => {
    const text = JSON.stringify([
      { UUID: A, Name: 'bm-1', 'Instance UUID': null, 'Power State': 'power off', 'Provisioning State': 'available', Maintenance: false },
      { UUID: B.toUpperCase(), Name: 'bm-2', 'Instance UUID': I, 'Power State': 'power on', 'Provisioning State': 'active', Maintenance: true, 'Conductor Group': 'rack1' },
    ]);
    expect(parseIronicNodes(text, 'nodes.json')).toEqual([
      { uuid: A, instanceUuid: null, maintenance: false, provisionState: 'available', conductorGroup: null },
      { uuid: B, instanceUuid: I, maintenance: true, provisionState: 'active', conductorGroup: 'rack1' },
    ]);
  });

  it('reads the API field names (--fields uuid instance_uuid ...)', () => {
    const text = JSON.stringify([{ uuid: A, instance_uuid: I, maintenance: 'False', provision_state: 'active', conductor_group: '' }]);
    expect(parseIronicNodes(text, 'nodes.json')).toEqual([{ uuid: A, instanceUuid: I, maintenance: false, provisionState: 'active', conductorGroup: '' }]);
  });

  it("reads the Ironic API's own {\"nodes\": [...]}", () => {
    expect(parseIronicNodes(JSON.stringify({ nodes: [{ uuid: A }] }), 'f').map((n) => n.uuid)).toEqual([A]);
  });

  it('parses an explicit empty list (its plausibility is judged against the cells: operations/read/cells.ts)', () => {
    expect(parseIronicNodes('[]\n', 'f')).toEqual([]);
  });

  it('reads one uuid per line, ignoring comments and blank lines', () => {
    const text = `# exported from ironic\n\n${A}\n  ${B.toUpperCase()}  # rack 2\r\n${A}\n`;
    expect(parseIronicNodes(text, 'f')).toEqual([
      { uuid: A, instanceUuid: null, maintenance: null, provisionState: null, conductorGroup: null },
      { uuid: B, instanceUuid: null, maintenance: null, provisionState: null, conductorGroup: null },
    ]);
  });

  it('ignores a byte-order mark and lists a repeated node once', () => {
    expect(parseIronicNodes(`\uFEFF[{"UUID": "${A}"}, {"uuid": "${A}"}]`, 'f').map((n) => n.uuid)).toEqual([A]);
  });
});

describe('parseIronicNodes: refused input, one line naming the file', () => {
  // An empty list is implausible ground truth (issue 23): exit 2, not a usage error.
  it.each([
    ['an empty file', '', 'the file is empty'],
    ['a blank file', '  \n\n', 'the file is empty'],
    ['only comments', '# nothing here\n', 'lists no node UUIDs'],
  ])('%s is implausible', (_name, text, problem) => {
    const err = fails(text);
    expect(err.kind).toBe('implausible');
    expect(err.message.startsWith('--ironic-nodes nodes.json: ')).toBe(true);
    expect(err.message).toContain(problem);
    expect(err.message).not.toContain('\n');
    expect(err.hint).toContain('min_ironic_fraction');
  });
  const cases: Array<[string, string, string]> = [
    ['malformed JSON', '[{"UUID": ', 'not valid JSON'],
    ['a JSON object that is not a node list', '{"UUID": "x"}', 'expected a JSON list of nodes'],
    ['a list of non-objects', `["${A}"]`, 'entry 1 is not an object'],
    ['an object without a uuid', `[{"UUID": "${A}"}, {"Name": "bm-2"}]`, 'entry 2 has no UUID'],
    ['an invalid uuid', '[{"UUID": "not-a-uuid"}]', 'entry 1: its UUID is not a valid UUID (10 characters'],
    ['a non-string uuid', '[{"uuid": 42}]', 'entry 1: its UUID is not a valid UUID (a JSON number'],
    ['an invalid instance uuid', `[{"UUID": "${A}", "Instance UUID": "nope"}]`, 'its instance UUID is not a valid UUID (4 characters'],
    ['a text line that is not a uuid', `${A}\nbm-2\n`, 'line 2: the line is not a valid UUID (4 characters'],
    // The wrong file (a password file, a nova.conf) must not be echoed.
    ['a password file', 'S3cr3tPassw0rd\n', 'line 1: the line is not a valid UUID (14 characters, expected 8-4-4-4-12 hex digits; the text is not shown)'],
    ['JSON-looking secrets', '[S3cr3tPassw0rd]', 'not valid JSON (unexpected character)'],
  ];
  it.each(cases)('%s', (_name, text, problem) => {
    const err = fails(text);
    expect(err.kind).toBe('input');
    expect(err.message.startsWith('--ironic-nodes nodes.json: ')).toBe(true);
    expect(err.message).toContain(problem);
    expect(err.message).not.toContain('S3cr3t');
    expect(err.message).not.toContain('\n');
    expect(err.hint).toContain('openstack baremetal node list -f json');
  });
});

describe('isUuid', () => {
  it('accepts the canonical form in either case and nothing else', () => {
    expect(isUuid(A)).toBe(true);
    expect(isUuid(A.toUpperCase())).toBe(true);
    expect(isUuid(A.replace(/-/g, ''))).toBe(false);
    expect(isUuid(`{${A}}`)).toBe(false);
  });
});
