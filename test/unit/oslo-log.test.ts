import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLogLine, openOperatorLog, parseFacility, resolveLogTarget } from '../../src/cli/oslo-log.js';
import type { NovaConfig } from '../../src/config/types.js';

const NONE = { debug: undefined, verbose: false, logFile: undefined, logDir: undefined, useSyslog: undefined, syslogFacility: undefined };

function config(values: Record<string, string>): NovaConfig {
  return { get: (group: string, key: string) => (group === 'DEFAULT' ? values[key] : undefined) } as unknown as NovaConfig;
}

describe("the operator log's target, as oslo.log decides it", () => {
  it('log_file alone; log_dir/log_file; log_dir alone gives nova-reconcile.log; the command line wins over nova.conf', () => {
    expect(resolveLogTarget({ ...NONE, logFile: 'x.log' }, undefined, '/srv/run').file).toBe('/srv/run/x.log');
    expect(resolveLogTarget({ ...NONE, logFile: 'x.log', logDir: '/var/log/nova' }, undefined, '/srv/run').file).toBe('/var/log/nova/x.log');
    expect(resolveLogTarget({ ...NONE, logFile: '/abs/x.log', logDir: '/var/log/nova' }, undefined, '/srv/run').file).toBe('/abs/x.log');
    expect(resolveLogTarget(NONE, config({ log_dir: '/var/log/nova' }), '/').file).toBe('/var/log/nova/nova-reconcile.log');
    expect(resolveLogTarget({ ...NONE, logFile: '/cli.log' }, config({ log_file: '/conf.log' }), '/').file).toBe('/cli.log');
    expect(resolveLogTarget(NONE, undefined, '/')).toEqual({ file: undefined, syslogFacility: undefined, debug: false });
  });

  it('use_syslog and debug from nova.conf, overridden by --nouse-syslog / --nodebug; facilities as oslo.log spells them', () => {
    const conf = config({ use_syslog: 'True', debug: 'true', syslog_log_facility: 'LOG_LOCAL4' });
    expect(resolveLogTarget(NONE, conf, '/')).toEqual({ file: undefined, syslogFacility: 'local4', debug: true });
    expect(resolveLogTarget({ ...NONE, useSyslog: false, debug: false }, conf, '/')).toEqual({ file: undefined, syslogFacility: undefined, debug: false });
    expect(parseFacility('LOG_USER', 'x')).toBe('user');
    expect(parseFacility('local7', 'x')).toBe('local7');
    expect(() => parseFacility('LOG_LOCAL9', '--syslog-log-facility')).toThrow(/not a syslog facility/);
  });

  it("formats oslo.log's default line, one line, passwords masked", () => {
    const at = new Date(2026, 11, 3, 9, 5, 7, 42);
    expect(formatLogLine(at, 4242, 'INFO', 'nova_reconcile.audit', 'applied:\n  mysql://nova:pw@db/nova')).toBe('2026-12-03 09:05:07.042 4242 INFO nova_reconcile.audit [-] applied: mysql://nova:****@db/nova');
  });
});

describe("the operator log's writes", () => {
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it("writes a turn's INFO lines together at its end, a WARNING at once with what came before, everything by close", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-log-'));
    try {
      const file = join(dir, 'op.log');
      const warnings: string[] = [];
      const log = openOperatorLog({ name: 'n', pid: 7, target: () => ({ file, syslogFacility: undefined, debug: true }), warn: (l) => warnings.push(l), syslogSocket: undefined });
      const lines = (): string[] => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
      log.info('one');
      log.debug('two');
      expect(lines()).toEqual([]);
      await turn();
      expect(lines().map((l) => l.replace(/^.* 7 /, ''))).toEqual(['INFO n [-] one', 'DEBUG n [-] two']);
      log.info('three');
      log.warning('four');
      expect(lines().map((l) => l.replace(/^.* 7 /, ''))).toEqual(['INFO n [-] one', 'DEBUG n [-] two', 'INFO n [-] three', 'WARNING n [-] four']);
      log.info('five');
      await log.close();
      expect(lines()).toHaveLength(5);
      expect(warnings).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a write that fails (a full disk) warns once and stops the file, not the command', async () => {
    const warnings: string[] = [];
    const log = openOperatorLog({ name: 'n', pid: 7, target: () => ({ file: '/dev/full', syslogFacility: undefined, debug: false }), warn: (l) => warnings.push(l), syslogSocket: undefined });
    log.info('one');
    expect(() => log.error('two')).not.toThrow();
    log.info('three');
    await turn();
    await log.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^nova-reconcile: warning: cannot write the log file \/dev\/full: .*; nothing more is logged there$/);
  });
});
