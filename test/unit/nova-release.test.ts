// The alembic heads of Zed to 2026.2 and what the tool decides by them (issue 36).
import { describe, expect, it } from 'vitest';
import { classifyHead, deploymentRelease, describeNova, novaKnowsIronicByUuid, placementRelaxesCapacity, releaseJson } from '../../src/domain/nova-release.js';

const head = (db: 'api' | 'cell' | 'placement', h: string | null, label = `${db} database`): { db: typeof db; head: string | null; label: string } => ({ db, head: h, label });

describe('nova-release', () => {
  it.each([
    ['ccb0fa1a2252', 26, 26],
    ['960aac0e09ea', 27, 27],
    ['1acf2c98e646', 28, 28],
    ['13863f4e1612', 29, 30],
    ['2903cd72dc14', 31, 33],
    ['ab450ba04102', 34, 34],
  ])('the cell head %s is Nova %i to %i', (h, from, to) => {
    expect(classifyHead(head('cell', h))).toMatchObject({ known: true, from, to });
  });

  it('an unknown head is unknown, no head is Zed rules, and the lowest cell decides', () => {
    expect(classifyHead(head('cell', 'ffffffffffff')).known).toBe(false);
    expect(classifyHead(head('placement', '422ece571366'))).toMatchObject({ known: true, from: 6, to: 9 });
    const none = deploymentRelease([head('api', null), head('cell', null)]);
    expect(none.nova).toBeNull();
    expect(novaKnowsIronicByUuid(none)).toBe(false);
    expect(describeNova(none.nova)).toContain('Zed rules apply');
    const mixed = deploymentRelease([head('cell', '2903cd72dc14', "cell 'b'"), head('cell', 'ccb0fa1a2252', "cell 'a'"), head('api', 'cdeec0c85668')]);
    expect(mixed.nova).toEqual({ from: 26, to: 26 });
    expect(novaKnowsIronicByUuid(mixed)).toBe(false);
    expect(mixed.databases.map((d) => d.label)).toEqual(['api database', "cell 'a'", "cell 'b'"]);
    const newer = deploymentRelease([head('cell', '960aac0e09ea'), head('placement', 'a082b8bb98d0')]);
    expect(novaKnowsIronicByUuid(newer)).toBe(true);
    // Placement 10.0.0 to 16.0.0 share one head: whether it is 14.0.0+ is not known, so the stricter rule stays.
    expect(placementRelaxesCapacity(newer)).toBe(false);
    expect(releaseJson(newer)).toEqual({
      nova: 'Nova 27 (2023.1)',
      placement: 'Placement 10.x to 16.x',
      databases: [
        { db: 'cell', database: 'cell database', alembic_head: '960aac0e09ea', known: true },
        { db: 'placement', database: 'placement database', alembic_head: 'a082b8bb98d0', known: true },
      ],
    });
  });
});
