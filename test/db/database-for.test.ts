// databaseFor (operations/apply-plan.ts) finds a change's cell database
// through cell_mappings read once per deployment, not once per change (issue
// 20: a 1,000-unit cleanup made 1,000 round trips to the API database for
// them). A cell that is not mapped is still refused, and a failed read is not
// remembered.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDeployment, describeEachDialect, useDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { databaseFor } from '../../src/operations/apply-plan.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';

describeEachDialect('databaseFor', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'dbf');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('reads cell_mappings once for any number of cell changes; an unmapped cell is refused', async () => {
    await useDeployment(d, async (dep) => {
      const api = (await dep.api()).knex;
      const reads: string[] = [];
      api.on('query', (q: { sql: string }) => {
        if (q.sql.includes('cell_mappings')) reads.push(q.sql);
      });
      const first = await databaseFor(dep, { db: 'cell', cellUuid: CELL.cell1 });
      for (let i = 0; i < 5; i++) expect(await databaseFor(dep, { db: 'cell', cellUuid: CELL.cell1 })).toBe(first);
      const second = await databaseFor(dep, { db: 'cell', cellUuid: CELL.cell2 });
      expect(second).not.toBe(first);
      await expect(databaseFor(dep, { db: 'cell', cellUuid: '8b0a8a4e-0000-4000-8000-000000000000' })).rejects.toThrow(
        'cell 8b0a8a4e-0000-4000-8000-000000000000 is not in cell_mappings',
      );
      expect(reads).toHaveLength(1);
    });
  });

  it('a failed read of cell_mappings is read again by the next change', async () => {
    await useDeployment(d, async (dep) => {
      const api = (await dep.api()).knex;
      await api.schema.renameTable('cell_mappings', 'cell_mappings_away');
      await expect(databaseFor(dep, { db: 'cell', cellUuid: CELL.cell1 })).rejects.toThrow();
      await api.schema.renameTable('cell_mappings_away', 'cell_mappings');
      await expect(databaseFor(dep, { db: 'cell', cellUuid: CELL.cell1 })).resolves.toBeDefined();
    });
  });
});
