// The report of an evaluation over time: its markdown tables against tables written out by hand,
// its charts as well-formed SVG naming every series, and the folder writeReport leaves behind.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { renderCharts, type Chart } from '../../eval/overTime/charts.js';
import { publishReport, writeReport } from '../../eval/overTime/reportPage.js';
import type { EvaluationCell, EvaluationOverTime } from '../../eval/overTime/result.js';
import { sizesMarkdown, table4Markdown } from '../../eval/overTime/table.js';
import { overTimeFixture } from '../support/overTimeFixture.js';

/** Tags balance, text holds no bare `<` and every `&` starts an entity: what an XML parser would demand. */
function assertWellFormedSvg(svg: string): void {
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const open: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/g;
  for (const [, closing, name, , selfClosing] of svg.matchAll(tag)) {
    if (closing) assert.equal(open.pop(), name, `</${name}> closes what it did not open`);
    else if (!selfClosing) open.push(name!);
  }
  assert.deepEqual(open, [], 'every element is closed');
  const text = svg.replace(tag, '');
  assert.doesNotMatch(text, /[<>]/, 'no bare angle bracket outside the tags');
  assert.doesNotMatch(svg, /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i, 'every & is an entity');
}

/** A cell whose scores only the table reads. */
const cell = (mode: string, snapshot: string, type: EvaluationCell['type'], items: number, em: number, f1: number): EvaluationCell => ({
  mode,
  snapshot,
  type,
  items,
  em,
  f1,
  match: f1,
  retrievalHit: null,
  decisionAccuracy: null,
  adopted: 0,
  adoptedF1: null,
  notAdoptedF1: null,
  bleu: null,
});

describe('report tables', () => {
  it("draws GrowOVER's Table 4: a block of modes per type, a column per snapshot, EM / F1 in each cell", () => {
    assert.equal(
      table4Markdown(overTimeFixture()),
      `EM / F1 (%) per item type, mode and snapshot; – where there were no items.

| Type      | Mode     |  2024-01-01 |  2024-04-01 |  2024-07-01 |
|:----------|:---------|------------:|------------:|------------:|
| NEW       | NEVER    |  8.3 / 14.6 |  5.0 / 11.2 |   2.9 / 8.7 |
|           | ALWAYS   | 41.7 / 52.3 | 45.0 / 55.8 | 42.9 / 54.2 |
|           | ADAPTIVE | 40.0 / 50.9 | 42.5 / 53.6 | 42.9 / 53.1 |
| CHANGED   | NEVER    |           – |   4.0 / 9.8 |   3.3 / 7.5 |
|           | ALWAYS   |           – | 36.0 / 47.1 | 40.0 / 50.6 |
|           | ADAPTIVE |           – | 36.0 / 46.2 | 40.0 / 49.8 |
| UNCHANGED | NEVER    |           – | 31.1 / 38.4 | 29.1 / 36.9 |
|           | ALWAYS   |           – | 43.3 / 54.0 | 44.5 / 55.3 |
|           | ADAPTIVE |           – | 46.7 / 57.5 | 47.3 / 58.4 |
| ALL       | NEVER    |  8.3 / 14.6 | 20.0 / 26.8 | 19.4 / 26.2 |
|           | ALWAYS   | 41.7 / 52.3 | 42.6 / 53.4 | 43.4 / 54.3 |
|           | ADAPTIVE | 40.0 / 50.9 | 43.9 / 54.7 | 45.2 / 55.9 |
`,
    );
  });

  it("draws GrowOVER's Table 13: items per snapshot and type, QA and dialogue items summed", () => {
    assert.equal(
      sizesMarkdown(overTimeFixture()),
      `| Snapshot   | NEW | CHANGED | UNCHANGED | total |
|:-----------|----:|--------:|----------:|------:|
| 2024-01-01 | 120 |       0 |         0 |   120 |
| 2024-04-01 |  40 |      25 |        90 |   155 |
| 2024-07-01 |  35 |      30 |       110 |   175 |
`,
    );
  });

  it('escapes pipes in names, and marks cells without items apart from a score of 0', () => {
    const result: EvaluationOverTime = {
      finishedAt: '2025-01-01T00:00:00.000Z',
      source: 'data/qa.jsonl',
      snapshots: ['file'],
      modes: ['A|B', 'C'],
      cells: [cell('A|B', 'file', 'ALL', 4, 0, 0), cell('A|B', 'file', 'NEW', 0, 0, 0), cell('C', 'file', 'ALL', 4, 100, 100)],
      sizes: [{ snapshot: 'file', kind: 'qa', type: 'NEW', count: 4 }],
      reliability: [],
    };
    assert.equal(
      table4Markdown(result),
      `EM / F1 (%) per item type, mode and snapshot; – where there were no items.

| Type      | Mode |          file |
|:----------|:-----|--------------:|
| NEW       | A\\|B |             – |
|           | C    |             – |
| CHANGED   | A\\|B |             – |
|           | C    |             – |
| UNCHANGED | A\\|B |             – |
|           | C    |             – |
| ALL       | A\\|B |     0.0 / 0.0 |
|           | C    | 100.0 / 100.0 |
`,
    );
    assert.equal(
      sizesMarkdown(result),
      `| Snapshot | NEW | CHANGED | UNCHANGED | total |
|:---------|----:|--------:|----------:|------:|
| file     |   4 |       0 |         0 |     4 |
`,
    );
  });
});

describe('report charts', () => {
  let charts: Chart[];
  before(async () => {
    charts = await renderCharts(overTimeFixture());
  });

  it('renders the four charts as well-formed SVG that fetches nothing', () => {
    assert.deepEqual(
      charts.map(({ file }) => file),
      ['f1-over-snapshots.svg', 'benchmark-size.svg', 'reliability.svg', 'adopted-f1.svg'],
    );
    for (const { file, title, svg } of charts) {
      assertWellFormedSvg(svg);
      assert.ok(svg.includes(title), `${file} shows its title`);
      assert.doesNotMatch(
        svg.replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]*"/g, ''),
        /https?:|@import|@font-face|href=/,
        `${file} refers to nothing outside`,
      );
    }
  });

  it('leaves the result it draws as it was', async () => {
    const result = overTimeFixture();
    await renderCharts(result);
    assert.deepStrictEqual(result, overTimeFixture());
  });

  it('names every series: modes, item types, the gate per mode, adopted and not adopted', () => {
    const svg = (file: string): string => charts.find((chart) => chart.file === file)!.svg;
    const shown = (file: string, text: string): boolean => svg(file).includes(`>${text}</text>`);
    for (const name of ['NEVER', 'ALWAYS', 'ADAPTIVE', 'ALL', 'NEW', 'CHANGED', 'UNCHANGED', 'F1 (%)', 'snapshot'])
      assert.ok(shown('f1-over-snapshots.svg', name), name);
    for (const name of ['NEW', 'CHANGED', 'UNCHANGED', 'items', '120', '155', '175']) assert.ok(shown('benchmark-size.svg', name), name);
    for (const name of ['NEVER · ECE 0.142', 'ALWAYS · ECE 0.061', 'ADAPTIVE · ECE 0.048', 'mean p(reliable)', 'accuracy', 'answers'])
      assert.ok(shown('reliability.svg', name), name);
    for (const name of ['adopted', 'not adopted', 'NEVER', 'ALWAYS', 'ADAPTIVE', '2024-07-01']) assert.ok(shown('adopted-f1.svg', name), name);
  });

  it('leaves out the reliability diagram when no bin has an answer, and escapes names in the SVG', async () => {
    const result = overTimeFixture();
    result.reliability = result.reliability.map((mode) => ({ ...mode, bins: mode.bins.map((bin) => ({ ...bin, answers: 0 })) }));
    result.modes = result.modes.map((mode) => (mode === 'ADAPTIVE' ? 'A&B <x>' : mode));
    for (const one of result.cells) if (one.mode === 'ADAPTIVE') one.mode = 'A&B <x>';
    const drawn = await renderCharts(result);
    assert.deepEqual(
      drawn.map(({ file }) => file),
      ['f1-over-snapshots.svg', 'benchmark-size.svg', 'adopted-f1.svg'],
    );
    for (const { svg } of drawn) assertWellFormedSvg(svg);
    assert.ok(drawn[0]!.svg.includes('>A&amp;B &lt;x&gt;</text>'));
  });
});

describe('report folder', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chronoql-report-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes index.html with the charts inline, the charts as files, and result.json', async () => {
    const result = { ...overTimeFixture(), source: 'data/<qa> & "more".jsonl' };
    const written = await writeReport(result, join(dir, 'report'));
    const charts = await renderCharts(result);
    const files = ['index.html', 'result.json', ...charts.map(({ file }) => file)];
    assert.deepEqual(
      written,
      files.map((file) => join(dir, 'report', file)),
    );
    assert.deepEqual((await readdir(join(dir, 'report'))).sort(), [...files].sort());
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'report', 'result.json'), 'utf8')), result);

    const html = await readFile(join(dir, 'report', 'index.html'), 'utf8');
    for (const { file, svg } of charts) {
      assert.equal(await readFile(join(dir, 'report', file), 'utf8'), svg);
      assert.ok(html.includes(svg), `${file} is inline`);
    }
    assert.ok(html.includes('<dd>data/&lt;qa&gt; &amp; &quot;more&quot;.jsonl</dd>'), 'the source is escaped');
    assert.ok(html.includes('<dd>2024-07-02T09:41:27.000Z</dd>'), 'the finish time is shown');
    assert.ok(html.includes('<td class="number">45.2 / 55.9</td>'), 'Table 4 is there');
    assert.ok(
      html.includes(
        '<th scope="row">2024-07-01</th><td class="number">35</td><td class="number">30</td><td class="number">110</td><td class="number">175</td>',
      ),
      'the sizes are there',
    );
    assert.doesNotMatch(html, /<script|<link|<img|@import|url\(/i, 'nothing to run or fetch');
  });

  it('publishes a report in place of the one before, and leaves a directory that holds anything else alone', async () => {
    const published = join(dir, 'published');
    await writeReport(overTimeFixture(), join(dir, 'first run'));
    await writeReport({ ...overTimeFixture(), source: 'second run' }, join(dir, 'second run'));
    await publishReport(join(dir, 'first run'), published);
    await publishReport(join(dir, 'second run'), published);
    assert.equal(JSON.parse(await readFile(join(published, 'result.json'), 'utf8')).source, 'second run');
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('published')),
      ['published'],
      'nothing left beside it',
    );
    const dataDir = join(dir, 'data');
    await mkdir(join(dataDir, 'neo4j'), { recursive: true });
    await writeFile(join(dataDir, 'demo-api-key'), 'secret');
    await assert.rejects(publishReport(join(dir, 'first run'), dataDir), /holds files other than a report/);
    assert.deepEqual((await readdir(dataDir)).sort(), ['demo-api-key', 'neo4j']);
  });
});
