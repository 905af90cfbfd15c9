/**
 * The tables of an evaluation over time, as plain rows of text (the report page turns them into
 * HTML) and as markdown: GrowOVER's Table 4 (answer quality per item type, mode and snapshot)
 * and its Table 13 (benchmark size per snapshot and type).
 */
import type { CellType, EvaluationCell, EvaluationOverTime } from './result.js';

export const TYPES: readonly CellType[] = ['NEW', 'CHANGED', 'UNCHANGED', 'ALL'];
export const SIZE_TYPES = ['NEW', 'CHANGED', 'UNCHANGED'] as const;

/** Shown where a cell has no items: a 0 there would read as a measured score. */
export const NOT_MEASURED = '–';

export interface Table4Block {
  type: CellType;
  rows: Array<{ mode: string; cells: string[] }>;
}

export interface SizesTable {
  header: string[];
  rows: string[][];
}

const score = (value: number): string => value.toFixed(1);

function emF1(cell: EvaluationCell | undefined): string {
  return cell === undefined || cell.items === 0 ? NOT_MEASURED : `${score(cell.em)} / ${score(cell.f1)}`;
}

/** One block per item type, one row per mode, one cell (EM / F1) per snapshot, in the result's orders. */
export function table4Blocks(result: EvaluationOverTime): Table4Block[] {
  const byKey = new Map(result.cells.map((cell) => [`${cell.type}\u0000${cell.mode}\u0000${cell.snapshot}`, cell]));
  return TYPES.map((type) => ({
    type,
    rows: result.modes.map((mode) => ({ mode, cells: result.snapshots.map((snapshot) => emF1(byKey.get(`${type}\u0000${mode}\u0000${snapshot}`))) })),
  }));
}

/** Items per snapshot and type, every kind (QA, dialogue, …) counted together. */
export function sizesTable(result: EvaluationOverTime): SizesTable {
  const count = (snapshot: string, type?: string): number =>
    result.sizes.filter((size) => size.snapshot === snapshot && (type === undefined || size.type === type)).reduce((sum, size) => sum + size.count, 0);
  return {
    header: ['Snapshot', ...SIZE_TYPES, 'total'],
    rows: result.snapshots.map((snapshot) => [snapshot, ...SIZE_TYPES.map((type) => String(count(snapshot, type))), String(count(snapshot))]),
  };
}

/** A pipe inside a mode or snapshot name would end its cell. */
const markdownCell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|');

/**
 * A markdown table padded so that its columns line up in a terminal too; `numeric` columns are
 * right-aligned, the rest left-aligned.
 */
function markdownTable(header: string[], rows: string[][], numeric: (column: number) => boolean): string {
  const cells = [header, ...rows].map((row) => row.map(markdownCell));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => row[column]!.length)));
  const pad = (text: string, column: number): string => (numeric(column) ? text.padStart(widths[column]!) : text.padEnd(widths[column]!));
  const line = (row: string[]): string => `| ${row.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric(column) ? `${'-'.repeat(width + 1)}:` : `:${'-'.repeat(width + 1)}`)).join('|')}|`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n') + '\n';
}

/**
 * GrowOVER's Table 4: a Type column starts each block of modes, so the snapshots stay one set
 * of columns that can be read down across the types.
 */
export function table4Markdown(result: EvaluationOverTime): string {
  const rows = table4Blocks(result).flatMap(({ type, rows: modes }) => modes.map(({ mode, cells }, i) => [i === 0 ? type : '', mode, ...cells]));
  return (
    `EM / F1 (%) per item type, mode and snapshot; ${NOT_MEASURED} where there were no items.\n\n` +
    markdownTable(['Type', 'Mode', ...result.snapshots], rows, (column) => column >= 2)
  );
}

/** GrowOVER's Table 13: benchmark items per snapshot and type. */
export function sizesMarkdown(result: EvaluationOverTime): string {
  const { header, rows } = sizesTable(result);
  return markdownTable(header, rows, (column) => column >= 1);
}
