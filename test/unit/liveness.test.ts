// Nova's servicegroup rule (§7), including the absolute distance (future
// heartbeats), the created_at fallback and forced_down.
import { describe, expect, it } from 'vitest';
import { isServiceUp, lastHeartbeat, parseNaiveUtc, serviceState } from '../../src/domain/liveness.js';
import { NOW, ago } from '../helpers/snapshot-builders.js';

const DOWN_TIME = 60;

/** A naive-UTC timestamp `seconds` before NOW (negative: in the future). */

function svc(over: { lastSeenUp?: string | null; createdAt?: string | null; forcedDown?: boolean }) {
  return { lastSeenUp: null, createdAt: ago(86400), forcedDown: false, ...over };
}

describe('parseNaiveUtc', () => {
  it.each([
    ['2026-06-01 12:00:00', NOW],
    ['2026-06-01T12:00:00', NOW],
    ['2026-06-01 12:00:00.250000', NOW + 250],
    [' 2026-06-01 12:00:00 ', NOW],
  ])('reads %j as UTC', (text, ms) => {
    expect(parseNaiveUtc(text)).toBe(ms);
  });

  it.each([null, undefined, '', 'yesterday', '2026-06-01'])('gives undefined for %j', (text) => {
    expect(parseNaiveUtc(text)).toBeUndefined();
  });
});

describe('isServiceUp', () => {
  const cases: Array<[string, ReturnType<typeof svc>, boolean]> = [
    ['heartbeat now', svc({ lastSeenUp: ago(0) }), true],
    ['heartbeat exactly service_down_time ago', svc({ lastSeenUp: ago(DOWN_TIME) }), true],
    ['heartbeat one second too old', svc({ lastSeenUp: ago(DOWN_TIME + 1) }), false],
    ['heartbeat slightly in the future (clock skew)', svc({ lastSeenUp: ago(-30) }), true],
    ['heartbeat far in the future counts as down (absolute distance)', svc({ lastSeenUp: ago(-(DOWN_TIME + 1)) }), false],
    ['never reported, created just now: up for service_down_time', svc({ lastSeenUp: null, createdAt: ago(10) }), true],
    ['never reported, created long ago', svc({ lastSeenUp: null, createdAt: ago(DOWN_TIME + 1) }), false],
    ['last_seen_up wins over created_at', svc({ lastSeenUp: ago(5), createdAt: ago(86400) }), true],
    ['forced down, even with a fresh heartbeat', svc({ lastSeenUp: ago(0), forcedDown: true }), false],
    ['no timestamp at all', svc({ lastSeenUp: null, createdAt: null }), false],
  ];
  it.each(cases)('%s', (_name, service, up) => {
    expect(isServiceUp(service, NOW, DOWN_TIME)).toBe(up);
  });

  it('uses the given (already corrected) service_down_time', () => {
    // report_interval 30 with service_down_time 60 is corrected by nova to 75.
    expect(isServiceUp(svc({ lastSeenUp: ago(70) }), NOW, 75)).toBe(true);
    expect(isServiceUp(svc({ lastSeenUp: ago(70) }), NOW, 60)).toBe(false);
  });
});

describe('serviceState and lastHeartbeat', () => {
  it('says forced-down before judging the heartbeat', () => {
    expect(serviceState(svc({ lastSeenUp: ago(DOWN_TIME * 10), forcedDown: true }), NOW, DOWN_TIME)).toBe('forced-down');
    expect(serviceState(svc({ lastSeenUp: ago(DOWN_TIME * 10) }), NOW, DOWN_TIME)).toBe('down');
    expect(serviceState(svc({ lastSeenUp: ago(1) }), NOW, DOWN_TIME)).toBe('up');
  });

  it('falls back to created_at when last_seen_up is NULL', () => {
    expect(lastHeartbeat(svc({ lastSeenUp: null, createdAt: ago(42) }))).toBe(NOW - 42_000);
  });
});
