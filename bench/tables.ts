// The table renderer's time against its rows (issue 18: cli-table3 took
// 1.2 s for 1,000 rows, 19 s for 6,000; the target is 30,000 rows in at most
// 1 s). In-process, on rows shaped like `compute_node list`'s (11 columns,
// uuids and host names), piped (whole cells) and fitted to a 120-column
// terminal. Run alone with `npm run bench:tables`; `npm run bench` includes it.
import { pathToFileURL } from 'node:url';
import { renderTable, type TableCell } from '../src/cli/render-table.js';

export const TABLE_TARGET_MS = 1000;
const HEADERS = ['uuid', 'cell', 'host', 'hypervisor_hostname', 'type', 'service', 'mapped', 'provider', 'allocations', 'instances', 'ironic_node'];

export interface TableTiming {
  readonly rows: number;
  readonly pipedMs: number;
  readonly fittedMs: number;
}

function rowsOf(n: number): TableCell[][] {
  const out: TableCell[][] = [];
  for (let i = 0; i < n; i++) {
    const hex = i.toString(16).padStart(12, '0');
    out.push([`5e0a7c3d-91b4-4f6a-8d2e-${hex}`, `cell${(i % 3) + 1}`, `ironic-compute-${i % 7}`, `5e0a7c3d-91b4-4f6a-8d2e-${hex}`, 'ironic', i % 50 === 0 ? 'down' : 'up', 'yes', 'yes', i % 2, i % 2, i % 97 === 0 ? 'no' : 'yes']);
  }
  return out;
}

function timeMs(fn: () => string, runs: number): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    const text = fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (text.length === 0) throw new Error('empty table');
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

export function benchTables(sizes: readonly number[] = [1000, 10_000, 30_000], runs = 3): TableTiming[] {
  return sizes.map((n) => {
    const rows = rowsOf(n);
    return { rows: n, pipedMs: timeMs(() => renderTable(HEADERS, rows), runs), fittedMs: timeMs(() => renderTable(HEADERS, rows, { maxWidth: 120 }), runs) };
  });
}

export function renderTableTimings(timings: readonly TableTiming[]): string {
  const lines = ['| rows | piped (ms) | fitted to 120 columns (ms) | target |', '| ---: | ---: | ---: | --- |'];
  for (const t of timings) {
    const verdict = t.rows >= 30_000 ? (Math.max(t.pipedMs, t.fittedMs) <= TABLE_TARGET_MS ? `met (≤ ${TABLE_TARGET_MS} ms)` : `MISSED (> ${TABLE_TARGET_MS} ms)`) : '';
    lines.push(`| ${t.rows.toLocaleString('en')} | ${t.pipedMs.toFixed(0)} | ${t.fittedMs.toFixed(0)} | ${verdict} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const timings = benchTables();
  process.stdout.write(`Table rendering (median of 3, in-process):\n\n${renderTableTimings(timings)}\n`);
  const big = timings.find((t) => t.rows === 30_000);
  process.exitCode = big !== undefined && Math.max(big.pipedMs, big.fittedMs) > TABLE_TARGET_MS ? 1 : 0;
}
