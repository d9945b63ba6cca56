import { describe, expect, it } from 'vitest';
import { expandOptionPrefixes, extractGlobalArgs } from '../../src/cli/argv.js';

describe('extractGlobalArgs', () => {
  it('keeps --config-file and --config-dir in command-line order, wherever they are', () => {
    const g = extractGlobalArgs(['--config-file', 'a.conf', 'cell_v2', '--config-dir=d', 'discover_hosts', '--config-file=b.conf', '--verbose', '-d']);
    expect(g.sources).toEqual([
      { kind: 'file', path: 'a.conf' },
      { kind: 'dir', path: 'd' },
      { kind: 'file', path: 'b.conf' },
    ]);
    expect(g.rest).toEqual(['cell_v2', 'discover_hosts', '--verbose']);
    expect(g.debug).toBe(true);
  });

  it("takes oslo.log's options anywhere; the last of --debug/--nodebug wins; --verbose is oslo.log's only before the command words", () => {
    const g = extractGlobalArgs(['--verbose', '--log-file', 'a.log', 'cell_v2', '--debug', '--use-syslog', 'discover_hosts', '--log_dir=/var/log/nova', '--nodebug', '--syslog-log-facility', 'LOG_LOCAL1', '--verbose', '--progress']);
    expect(g.rest).toEqual(['cell_v2', 'discover_hosts', '--verbose']);
    expect(g.log).toEqual({ debug: false, verbose: true, logFile: 'a.log', logDir: '/var/log/nova', useSyslog: true, syslogFacility: 'LOG_LOCAL1' });
    expect(g.debug).toBe(false);
    expect(g.progress).toBe(true);
    expect(g.leadingUnknown).toBeUndefined();
  });

  it('notes the first unknown option before the command words, and keeps --help before them', () => {
    expect(extractGlobalArgs(['--bogus=1', '--other', 'audit']).leadingUnknown).toBe('--bogus');
    expect(extractGlobalArgs(['audit', '--bogus']).leadingUnknown).toBeUndefined();
    expect(extractGlobalArgs(['--help']).rest).toEqual(['--help']);
    expect(extractGlobalArgs(['--help']).leadingUnknown).toBeUndefined();
  });

  it('rejects a --config-file without a value', () => {
    expect(() => extractGlobalArgs(['cell_v2', 'list_cells', '--config-file'])).toThrow(/needs a value/);
  });
});

describe('expandOptionPrefixes (argparse abbreviations)', () => {
  const opts = ['--verbose', '--strict', '--by-service', '--cell_uuid', '--dry-run'];
  it.each([
    [['--verb'], ['--verbose']],
    [['--by'], ['--by-service']],
    [['--cell=x'], ['--cell_uuid=x']],
    [['--verbose', '--strict'], ['--verbose', '--strict']],
    [['--nope'], ['--nope']],
  ])('%j -> %j', (input, expected) => {
    expect(expandOptionPrefixes(input, opts)).toEqual(expected);
  });

  it('refuses an ambiguous prefix', () => {
    expect(() => expandOptionPrefixes(['--s'], ['--strict', '--stats'])).toThrow(/ambiguous/);
  });
});
