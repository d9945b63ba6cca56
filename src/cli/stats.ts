// --stats: one machine-readable line on stderr, used by the benchmark.
import { roundTrips } from '../db/connect.js';

export function renderStats(elapsedMs: number, maxRssKb: number): string {
  return `stats: round_trips=${roundTrips.count} elapsed_ms=${elapsedMs} max_rss_kb=${maxRssKb}`;
}
