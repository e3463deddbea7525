/** How `ls` fits a table into a width: which columns give way, how a cut cell reads. */
import { describe, expect, it } from 'vitest';
import { fitTable } from '../../src/cli/commands/ls.js';

/** The width of the table Printer.table would draw: columns two spaces apart. */
function drawnWidth(table: { headers: string[]; rows: string[][] }): number {
  const cells = [table.headers, ...table.rows];
  const widths = table.headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1);
}

describe('fitTable', () => {
  it('leaves a table that fits as it is', () => {
    const table = { headers: ['NAME', 'URL'], rows: [['notes', '/d/notes.production/mcp']] };
    expect(fitTable(table.headers, table.rows, 100, [0, 1])).toEqual(table);
  });

  it.each([
    [40, ['a'.repeat(30), 'deploy_1', '/d/' + 'b'.repeat(40) + '.production/mcp']],
    [60, ['n'.repeat(80), 'deploy_2', '/d/short/mcp']],
    [100, ['x'.repeat(200), 'deploy_3', '/d/' + 'y'.repeat(200) + '/mcp']],
  ])('fits %i columns, cutting only the columns that may give way', (width, row) => {
    const fitted = fitTable(['NAME', 'DEPLOYMENT', 'URL'], [row], width, [0, 2]);
    expect(drawnWidth(fitted)).toBeLessThanOrEqual(width);
    expect(fitted.rows[0]![1]).toBe(row[1]);
  });

  it('cuts a name at its end and a URL in its middle, keeping `/mcp`', () => {
    const fitted = fitTable(['NAME', 'URL'], [['n'.repeat(30), `/d/${'u'.repeat(30)}/mcp`]], 30, [0, 1]);
    expect(fitted.rows[0]![0]).toMatch(/^n+…$/);
    expect(fitted.rows[0]![1]).toMatch(/^\/d\/u+…u+\/mcp$/);
  });

  it('never cuts below 12 columns or its header: a table of fixed columns may stay wider', () => {
    const fitted = fitTable(['NAME', 'FIXED'], [['n'.repeat(20), 'f'.repeat(50)]], 40, [0]);
    expect(fitted.rows[0]![0]).toBe(`${'n'.repeat(11)}…`);
    expect(fitted.rows[0]![1]).toBe('f'.repeat(50));
  });
});
