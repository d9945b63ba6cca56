// A cell is named the same way in a plan and in an audit of the same
// deployment (src/domain/cell-names.ts): by its name when no other cell has
// it, else by its uuid; and every name printed finds its cell with --cell.
// The state: the libvirt scenario after a discover, with compute-4 (whose
// service lives in cell2) mapped to cell1. The audit reports it as a
// wrong-cell mapping; discover_hosts --remap plans to move it.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';

describeEachDialect('cells are named alike in plans and audits', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'cellnames');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    await d.knex('api')('host_mappings').update({ cell_id: d.dbs.cellIds.cell1 }).where('host', 'compute-4');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const rename = async (cell: 'cell1' | 'cell2', name: string | null): Promise<void> => {
    await d.knex('api')('cell_mappings').update({ name }).where('uuid', CELL[cell]);
  };

  /** The audit's row for compute-4 (its cell column, its summary), the remap plan's text, and what `audit --cell` makes of the name the audit printed. */
  async function whatTheySay(): Promise<{ cell: string; summary: string; plan: string; byCell: string }> {
    const audit = await runBin([...d.args, 'audit', '--kind', 'wrong-cell-mapping', '-f', 'csv', '-c', 'cell', '-c', 'summary']);
    expect(audit.code, audit.stderr).toBe(3);
    const rows = audit.stdout.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(1);
    const [, cell, summary] = /^"([^"]*)","([^"]*)"$/.exec(rows[0] as string) ?? [];
    const plan = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--remap']);
    expect(plan.code, plan.stderr).toBe(3);
    const byCell = await runBin([...d.args, 'audit', '--kind', 'wrong-cell-mapping', '--cell', cell as string, '-f', 'value', '-c', 'summary']);
    expect(byCell.code, byCell.stderr).toBe(3);
    return { cell: cell as string, summary: summary as string, plan: plan.stdout, byCell: byCell.stdout };
  }

  /** `mapped`: the words that name cell1 (where compute-4 is mapped); `lives`: cell2 (where its service is). */
  function expectNamed(said: { cell: string; summary: string; plan: string; byCell: string }, mapped: string, lives: string): void {
    expect(said.cell).toBe(lives);
    expect(said.summary).toBe(`host compute-4 is in cell ${lives} but mapped to cell ${mapped}: discover_hosts never re-points it`);
    expect(said.plan).toContain(`host compute-4 is mapped to cell ${mapped} but lives in cell ${lives}\n`);
    expect(said.plan).toContain(`[cell ${mapped}] check that nothing live has host compute-4 in this cell`);
    expect(said.plan).toContain(`from cell ${mapped} to cell ${lives}: the host's live nova-compute service is in cell ${lives}; the scheduler sends its builds to cell ${mapped}`);
    // The name the audit printed is one `--cell` takes, and it is that cell.
    expect(said.byCell).toBe(`${said.summary}\n`);
  }

  it('by name when each cell has its own: the audit column and summary, the plan title, change lines and reasons say cell1 and cell2', async () => {
    expectNamed(await whatTheySay(), 'cell1', 'cell2');
  });

  it('by uuid where two cells share a name, and where a cell has none', async () => {
    await rename('cell1', 'twin');
    await rename('cell2', 'twin');
    expectNamed(await whatTheySay(), CELL.cell1, CELL.cell2);
    await rename('cell1', null);
    await rename('cell2', 'cell2');
    expectNamed(await whatTheySay(), CELL.cell1, 'cell2');
    await rename('cell1', '');
    expectNamed(await whatTheySay(), CELL.cell1, 'cell2');
  });
});
