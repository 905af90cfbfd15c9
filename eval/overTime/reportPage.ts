/**
 * The report of an evaluation over time as a folder: one SVG per chart, the result as JSON, and
 * an index.html that holds everything itself (styles, charts as inline SVG, tables), so it opens
 * from disk, from a server or from an archive the same way, needing no script and no network.
 */
import { cp, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { renderCharts, type Chart } from './charts.js';
import type { EvaluationOverTime } from './result.js';
import { sizesTable, table4Blocks, NOT_MEASURED } from './table.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);

const STYLE = `
  :root { color-scheme: light; }
  body { margin: 0; background: #f6f7f9; color: #1d1f23; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
  main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
  h1 { font-size: 26px; margin: 0 0 6px; }
  h2 { font-size: 19px; margin: 36px 0 12px; border-bottom: 1px solid #d9dce1; padding-bottom: 4px; }
  .meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0 0; }
  .meta dt { color: #5b616b; }
  .meta dd { margin: 0; overflow-wrap: anywhere; }
  figure { margin: 0 0 20px; background: #fff; border: 1px solid #d9dce1; border-radius: 6px; padding: 8px; overflow-x: auto; }
  figure svg { display: block; }
  figcaption { font-size: 13px; color: #5b616b; padding: 4px 6px 0; }
  table { border-collapse: collapse; background: #fff; font-variant-numeric: tabular-nums; margin-bottom: 8px; }
  caption { caption-side: top; text-align: left; color: #5b616b; font-size: 13px; padding-bottom: 6px; }
  th, td { border: 1px solid #d9dce1; padding: 4px 10px; }
  thead th { background: #eef0f3; }
  tbody th { text-align: left; font-weight: 600; }
  td.number { text-align: right; white-space: nowrap; }
  tbody.type th[scope="rowgroup"] { background: #f3f5f8; vertical-align: top; }
  .empty { color: #9aa0a8; }
`;

const numberCell = (text: string): string => `<td class="number${text === NOT_MEASURED ? ' empty' : ''}">${escapeHtml(text)}</td>`;

function table4Html(result: EvaluationOverTime): string {
  const head = `<thead><tr><th scope="col">Type</th><th scope="col">Mode</th>${result.snapshots.map((snapshot) => `<th scope="col">${escapeHtml(snapshot)}</th>`).join('')}</tr></thead>`;
  const bodies = table4Blocks(result).map(({ type, rows }) => {
    const lines = rows.map(({ mode, cells }, i) => {
      const typeCell = i === 0 ? `<th scope="rowgroup" rowspan="${rows.length}">${escapeHtml(type)}</th>` : '';
      return `<tr>${typeCell}<th scope="row">${escapeHtml(mode)}</th>${cells.map(numberCell).join('')}</tr>`;
    });
    return `<tbody class="type">${lines.join('')}</tbody>`;
  });
  return `<table id="table4"><caption>EM / F1 (%) per item type, mode and snapshot; ${NOT_MEASURED} where there were no items.</caption>${head}${bodies.join('')}</table>`;
}

function sizesHtml(result: EvaluationOverTime): string {
  const { header, rows } = sizesTable(result);
  const head = `<thead><tr>${header.map((name) => `<th scope="col">${escapeHtml(name)}</th>`).join('')}</tr></thead>`;
  const body = rows.map(([snapshot, ...counts]) => `<tr><th scope="row">${escapeHtml(snapshot!)}</th>${counts.map(numberCell).join('')}</tr>`).join('');
  return `<table id="sizes"><caption>Benchmark items per snapshot and type, every kind counted.</caption>${head}<tbody>${body}</tbody></table>`;
}

/** Vega writes the SVG and escapes the text inside it, so it goes in as it is. */
const figure = ({ file, title, svg }: Chart): string =>
  `<figure id="${escapeHtml(file.replace(/\.svg$/, ''))}" aria-label="${escapeHtml(title)}">${svg}<figcaption>SVG: <a href="${escapeHtml(encodeURIComponent(file))}">${escapeHtml(file)}</a></figcaption></figure>`;

function reportHtml(result: EvaluationOverTime, charts: readonly Chart[]): string {
  const meta: Array<[string, string]> = [
    ['Source', result.source],
    ['Finished', result.finishedAt],
    ['Snapshots', result.snapshots.join(', ')],
    ['Modes', result.modes.join(', ')],
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ChronoQL evaluation over time · ${escapeHtml(result.source)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>ChronoQL evaluation over time</h1>
<dl class="meta">${meta.map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>
<h2>Answer quality</h2>
${table4Html(result)}
<h2>Benchmark size</h2>
${sizesHtml(result)}
<h2>Charts</h2>
${charts.map(figure).join('\n')}
</main>
</body>
</html>
`;
}

/** Writes the report into `dir` (created if missing) and returns the paths it wrote, index.html first. */
export async function writeReport(result: EvaluationOverTime, dir: string): Promise<string[]> {
  const charts = await renderCharts(result);
  await mkdir(dir, { recursive: true });
  const files: Array<[string, string]> = [
    ['index.html', reportHtml(result, charts)],
    ['result.json', `${JSON.stringify(result, null, 2)}\n`],
    ...charts.map(({ file, svg }): [string, string] => [file, svg]),
  ];
  for (const [name, text] of files) await writeFile(join(dir, name), text, 'utf8');
  return files.map(([name]) => join(dir, name));
}

/**
 * Makes the report written in `written` the one at `published` (what the server shows at
 * /reports): copied beside it first, then swapped in, so the server never shows half a report.
 * A directory there that holds anything but a report is left alone: CHRONOQL_REPORTS_DIR may
 * point anywhere.
 */
export async function publishReport(written: string, published: string): Promise<void> {
  const target = resolve(published);
  const existing = await readdir(target).catch(() => null);
  if (existing && existing.length > 0 && !existing.every((name) => name === 'index.html' || name === 'result.json' || name.endsWith('.svg'))) {
    throw new RangeError(
      `${target} holds files other than a report (${existing
        .filter((name) => !name.endsWith('.svg'))
        .slice(0, 3)
        .join(', ')}…); set CHRONOQL_REPORTS_DIR to a directory of its own`,
    );
  }
  const fresh = `${target}.new-${process.pid}`;
  const old = `${target}.old-${process.pid}`;
  await rm(fresh, { recursive: true, force: true });
  await cp(written, fresh, { recursive: true });
  if (existing) await rename(target, old);
  await rename(fresh, target);
  await rm(old, { recursive: true, force: true });
}
