// Scenario timestamps are relative to the moment a scenario is populated, so
// that services are heartbeating "now" whenever a sandbox is built, and the
// tool's liveness rules (service_down_time, nova-facts §7) see them up.
import { utcNowString } from '../db/time.js';

export interface ScenarioClock {
  /** Naive UTC 'YYYY-MM-DD HH:MM:SS'. */
  readonly now: string;
  /** The naive UTC timestamp `seconds` before now. */
  ago(seconds: number): string;
}

export const MINUTE = 60;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function scenarioClock(at: Date = new Date()): ScenarioClock {
  const ms = Math.floor(at.getTime() / 1000) * 1000;
  return {
    now: utcNowString(new Date(ms)),
    ago: (seconds) => utcNowString(new Date(ms - seconds * 1000)),
  };
}
