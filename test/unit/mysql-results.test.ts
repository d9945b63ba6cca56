// How a database name is written into SQL where a binding cannot stand
// (docs/SQL-BINDING.md, "Identifiers are constants"), and what a raw
// mysql2 result's rows are.
import { describe, expect, it } from 'vitest';
import { quoteIdentifier, rowsOf } from '../../src/db/mysql-results.js';

describe('quoteIdentifier', () => {
  it('puts any name in backquotes, a backquote in it doubled, so it stays one identifier', () => {
    expect(quoteIdentifier('nova_api')).toBe('`nova_api`');
    expect(quoteIdentifier('a`b')).toBe('`a``b`');
    expect(quoteIdentifier('x`; DROP DATABASE nova; --')).toBe('`x``; DROP DATABASE nova; --`');
    expect(quoteIdentifier('``')).toBe('``````');
  });
});

describe('rowsOf', () => {
  it('takes the rows of [rows, fields], and nothing of anything else', () => {
    expect(rowsOf([[{ a: 1 }], []])).toEqual([{ a: 1 }]);
    expect(rowsOf([{ affectedRows: 1 }, undefined])).toEqual([]);
    expect(rowsOf(undefined)).toEqual([]);
  });
});
