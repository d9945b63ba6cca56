import { describe, expect, it } from 'vitest';
import { isReconcileError } from '../../src/errors.js';
import { parseIni } from '../../src/config/ini-parser.js';

type Entry = readonly [section: string, key: string, value: string];

// Expected values were produced by running oslo_config/iniparser.py on the same text.
const PARSES: readonly { readonly name: string; readonly text: string; readonly sections: readonly string[]; readonly entries: readonly Entry[] }[] = [
  { name: 'key = value', text: '[DEFAULT]\nkey = value\n', sections: ['DEFAULT'], entries: [['DEFAULT', 'key', 'value']] },
  {
    name: 'the first of ":" and "=" is the delimiter',
    text: '[DEFAULT]\nkey: value = x\nk2 = a: b\n',
    sections: ['DEFAULT'],
    entries: [['DEFAULT', 'key', 'value = x'], ['DEFAULT', 'k2', 'a: b']],
  },
  {
    name: 'matching surrounding quotes are removed, once',
    text: "[a]\nk = 'quoted'\nk2 = \"dq\"\nk3 = 'mismatch\"\nk4 = '\nk5 =\n",
    sections: ['a'],
    entries: [['a', 'k', 'quoted'], ['a', 'k2', 'dq'], ['a', 'k3', `'mismatch"`], ['a', 'k4', ''], ['a', 'k5', '']],
  },
  {
    name: 'quotes are removed after stripping',
    text: '[a]\nk =    "  padded  "   \n',
    sections: ['a'],
    entries: [['a', 'k', '  padded  ']],
  },
  {
    name: 'indented lines continue a value; a blank line ends it',
    text: '[a]\nk = first\n  second\n\tthird\n\nk2 = x\n',
    sections: ['a'],
    entries: [['a', 'k', 'first\nsecond\nthird'], ['a', 'k2', 'x']],
  },
  {
    name: 'an indented comment is part of the value',
    text: '[a]\nk = v   \n  # indented comment\n',
    sections: ['a'],
    entries: [['a', 'k', 'v\n# indented comment']],
  },
  {
    name: '# and ; only start comments at the beginning of a line; duplicates are kept',
    text: '[a]\nk = v # not a comment\n# comment\n; also\nk = again\n',
    sections: ['a'],
    entries: [['a', 'k', 'v # not a comment'], ['a', 'k', 'again']],
  },
  {
    name: 'section names are kept as written; keys keep their case',
    text: '[ spaced ]\nk=v\n[A]\nK=V\n',
    sections: [' spaced ', 'A'],
    entries: [[' spaced ', 'k', 'v'], ['A', 'K', 'V']],
  },
  { name: 'CRLF line endings', text: '[a]\r\nk = v\r\n  c\r\n', sections: ['a'], entries: [['a', 'k', 'v\nc']] },
  { name: 'an empty file', text: '', sections: [], entries: [] },
  { name: 'an empty section', text: '[empty]\n\n[b]\nx = 1', sections: ['empty', 'b'], entries: [['b', 'x', '1']] },
];

const ERRORS: readonly { readonly name: string; readonly text: string; readonly line: number; readonly message: RegExp }[] = [
  { name: 'a key before any section', text: 'k = v\n', line: 1, message: /before any \[section\]/ },
  { name: 'a line without delimiter', text: '[a]\nnodelim\n', line: 2, message: /no "=" or ":"/ },
  { name: 'a continuation with no key', text: '  [a]\n', line: 1, message: /unexpected continuation/ },
  { name: 'a continuation after a comment', text: '[a]\nk = v\n# c\n  cont\n', line: 4, message: /unexpected continuation/ },
  { name: 'an unterminated section header', text: '[a\n', line: 1, message: /must end with "\]"/ },
  { name: 'an empty section name', text: '[]\n', line: 1, message: /empty section name/ },
  { name: 'an empty key', text: '[a]\n= v\n', line: 2, message: /key cannot be empty/ },
];

describe('parseIni', () => {
  it.each(PARSES)('$name', ({ text, sections, entries }) => {
    const parsed = parseIni(text, '/etc/nova/nova.conf');
    expect(parsed.path).toBe('/etc/nova/nova.conf');
    expect(parsed.sections).toEqual(sections);
    expect(parsed.entries.map((e) => [e.section, e.key, e.value])).toEqual(entries);
  });

  it('records the line of each key', () => {
    const parsed = parseIni('# c\n[a]\n\nk = v\n  more\nj = w\n', 'x.conf');
    expect(parsed.entries.map((e) => e.line)).toEqual([4, 6]);
  });

  it.each(ERRORS)('rejects $name with "<path>:<line>:"', ({ text, line, message }) => {
    let caught: unknown;
    try {
      parseIni(text, '/tmp/bad.conf');
    } catch (err) {
      caught = err;
    }
    expect(isReconcileError(caught)).toBe(true);
    if (!isReconcileError(caught)) return;
    expect(caught.kind).toBe('config');
    expect(caught.message.startsWith(`/tmp/bad.conf:${line}: `)).toBe(true);
    expect(caught.message).toMatch(message);
  });

  it('never quotes the offending line, which may hold a password', () => {
    for (const text of ['[a]\nS3cr3tMarker\n', '  S3cr3tMarker\n', 'password = S3cr3tMarker\n']) {
      expect(() => parseIni(text, 'x.conf')).toThrow(/x\.conf:1|x\.conf:2/);
      try {
        parseIni(text, 'x.conf');
      } catch (err) {
        expect(String((err as Error).message)).not.toContain('S3cr3tMarker');
      }
    }
  });
});
