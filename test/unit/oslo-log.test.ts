import { describe, expect, it } from 'vitest';
import { formatLogLine, parseFacility, resolveLogTarget } from '../../src/cli/oslo-log.js';
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
