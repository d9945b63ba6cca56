// Nova's servicegroup rule (DbDriver.is_up): a service is
// up when it is not forced down and its last heartbeat, or its creation when
// it never reported, is at most service_down_time away from now. The distance
// is absolute, so a heartbeat from the future (a skewed clock) also counts as
// down once it is further off than the limit. updated_at is never used: it
// changes on every save of the row, including a disable from the API.
import type { ServiceRec, Snapshot } from './model.js';

export type ServiceLiveness = Pick<ServiceRec, 'forcedDown' | 'lastSeenUp' | 'createdAt'>;

/** Epoch ms of a naive-UTC DATETIME string ('YYYY-MM-DD HH:MM:SS[.ffffff]'), as Nova stores them. */
export function parseNaiveUtc(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(value.trim());
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(Number(`0.${frac ?? '0'}`) * 1000));
  return Number.isNaN(ms) ? undefined : ms;
}

/** The timestamp Nova judges liveness by: last_seen_up, or created_at for a service that never reported. */
export function lastHeartbeat(service: ServiceLiveness): number | undefined {
  return parseNaiveUtc(service.lastSeenUp) ?? parseNaiveUtc(service.createdAt);
}

/**
 * @param now epoch ms
 * @param serviceDownTime seconds, already corrected as the servicegroup API
 *   corrects it (config.serviceDownTime)
 */
export function isServiceUp(service: ServiceLiveness, now: number, serviceDownTime: number): boolean {
  if (service.forcedDown) return false;
  const beat = lastHeartbeat(service);
  // Nova would raise on a row with neither timestamp; such a service cannot be shown to be up.
  if (beat === undefined) return false;
  return Math.abs(now - beat) / 1000 <= serviceDownTime;
}

/** The one state of a service row: forced down wins, then the heartbeat against service_down_time. */
export type ServiceState = 'up' | 'down' | 'forced-down';

export function serviceState(service: ServiceLiveness, now: number, serviceDownTime: number): ServiceState {
  if (service.forcedDown) return 'forced-down';
  return isServiceUp(service, now, serviceDownTime) ? 'up' : 'down';
}

/** A nova-compute service as the rebalance and compute_node move judge it: `gone` when there is no live row. */
export type ServiceHealth = ServiceState | 'gone';

export function serviceHealth(s: Snapshot, svc: ServiceRec | undefined): ServiceHealth {
  return svc === undefined ? 'gone' : serviceState(svc, s.takenAt, s.serviceDownTime);
}
