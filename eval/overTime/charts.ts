/**
 * The charts of an evaluation over time as SVG: Vega-Lite specifications compiled by vega-lite
 * and drawn by vega in Node, with no browser and no canvas. Text is set in the generic
 * sans-serif family, so a chart needs no font from anywhere.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { EvaluationOverTime } from './result.js';
import { SIZE_TYPES, TYPES } from './table.js';

export interface Chart {
  /** File name of the SVG, without a directory. */
  file: string;
  title: string;
  svg: string;
}

/** Vega's tableau10: one colour per mode, the same in every chart of a report. */
const PALETTE = ['#4c78a8', '#f58518', '#e45756', '#72b7b2', '#54a24b', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac'];
const modeColour = (result: EvaluationOverTime, mode: string): string => PALETTE[Math.max(0, result.modes.indexOf(mode)) % PALETTE.length]!;

const CONFIG: TopLevelSpec['config'] = {
  background: 'white',
  font: 'sans-serif',
  padding: 12,
  title: { fontSize: 15, subtitleFontSize: 12, subtitleColor: '#555', anchor: 'start', offset: 12 },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', gridColor: '#e6e6e6' },
  legend: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal' },
  header: { labelFontSize: 12, labelFontWeight: 'bold', titleFontSize: 12 },
};

function modeColourScale(result: EvaluationOverTime) {
  return { domain: result.modes, range: result.modes.map((mode) => modeColour(result, mode)) };
}

/** Days side by side overlap beyond a handful of snapshots; slanted they fit. */
const slantedDays = (result: EvaluationOverTime): number => (result.snapshots.length > 4 ? -40 : 0);

function f1OverSnapshots(result: EvaluationOverTime): TopLevelSpec | null {
  const values = result.cells.filter((cell) => cell.items > 0).map(({ mode, snapshot, type, f1 }) => ({ mode, snapshot, type, f1 }));
  if (values.length === 0) return null;
  return {
    data: { values },
    // Two panels a row: four side by side are wider than a page.
    facet: { field: 'type', type: 'nominal', sort: ['ALL', ...TYPES.filter((type) => type !== 'ALL')], title: null },
    columns: 2,
    spec: {
      width: Math.max(180, 75 * result.snapshots.length),
      height: 200,
      mark: { type: 'line', point: { size: 50 }, strokeWidth: 2 },
      encoding: {
        x: { field: 'snapshot', type: 'ordinal', title: 'snapshot', scale: { domain: result.snapshots }, axis: { labelAngle: slantedDays(result) } },
        y: { field: 'f1', type: 'quantitative', title: 'F1 (%)', scale: { domain: [0, 100] } },
        color: { field: 'mode', type: 'nominal', title: 'mode', scale: modeColourScale(result) },
      },
    },
  };
}

function benchmarkSize(result: EvaluationOverTime): TopLevelSpec | null {
  if (result.sizes.length === 0) return null;
  const values = result.sizes.map(({ snapshot, type, count }) => ({ snapshot, type, count, order: SIZE_TYPES.indexOf(type) }));
  const x = { field: 'snapshot', type: 'ordinal', title: 'snapshot', scale: { domain: result.snapshots }, axis: { labelAngle: slantedDays(result) } } as const;
  return {
    data: { values },
    width: Math.max(280, 90 * result.snapshots.length),
    height: 240,
    layer: [
      {
        mark: { type: 'bar', width: { band: 0.6 } },
        encoding: {
          x,
          y: { aggregate: 'sum', field: 'count', type: 'quantitative', title: 'items' },
          color: { field: 'type', type: 'nominal', title: 'type', scale: { domain: [...SIZE_TYPES], range: ['#54a24b', '#f58518', '#9ecae9'] } },
          order: { field: 'order', type: 'ordinal' },
        },
      },
      {
        // The total above each bar, which a stack otherwise leaves to mental arithmetic.
        mark: { type: 'text', dy: -7, fontSize: 11, color: '#333' },
        encoding: { x, y: { aggregate: 'sum', field: 'count', type: 'quantitative' }, text: { aggregate: 'sum', field: 'count', type: 'quantitative' } },
      },
    ],
  };
}

function reliabilityDiagram(result: EvaluationOverTime): TopLevelSpec | null {
  const modes = result.reliability
    // Copies, because vega tags every data object it is given with an id of its own.
    .map(({ mode, ece, bins }) => ({
      mode,
      ece,
      bins: bins.filter((bin) => bin.answers > 0).map(({ meanReliable, accuracy, answers }) => ({ meanReliable, accuracy, answers })),
    }))
    .filter(({ bins }) => bins.length > 0);
  if (modes.length === 0) return null;
  const unit = { type: 'quantitative' as const, scale: { domain: [0, 1] }, axis: { tickCount: 5 } };
  const answers = { field: 'answers', type: 'quantitative' as const, title: 'answers', scale: { range: [20, 300], zero: false } };
  return {
    hconcat: modes.map(({ mode, ece, bins }) => ({
      title: { text: `${mode} · ECE ${ece.toFixed(3)}`, fontSize: 13 },
      width: 200,
      height: 200,
      layer: [
        {
          data: {
            values: [
              { p: 0, right: 0 },
              { p: 1, right: 1 },
            ],
          },
          mark: { type: 'line', strokeDash: [4, 4], color: '#999', strokeWidth: 1 },
          encoding: { x: { ...unit, field: 'p', title: 'mean p(reliable)' }, y: { ...unit, field: 'right', title: 'accuracy' } },
        },
        {
          data: { values: bins },
          mark: { type: 'line', color: modeColour(result, mode), strokeWidth: 2 },
          encoding: { x: { ...unit, field: 'meanReliable' }, y: { ...unit, field: 'accuracy' } },
        },
        {
          // Draws nothing, and comes first for the legend: a legend takes its symbols' colour from the
          // first mark of its scale, and one in the colour of a single mode would stand for all of them.
          data: { values: bins },
          mark: { type: 'circle', color: '#888', opacity: 0 },
          encoding: { x: { ...unit, field: 'meanReliable' }, y: { ...unit, field: 'accuracy' }, size: { ...answers, legend: { symbolOpacity: 0.85 } } },
        },
        {
          data: { values: bins },
          mark: { type: 'circle', color: modeColour(result, mode), opacity: 0.85 },
          encoding: { x: { ...unit, field: 'meanReliable' }, y: { ...unit, field: 'accuracy' }, size: { ...answers } },
        },
      ],
    })),
    resolve: { scale: { size: 'shared' }, legend: { size: 'shared' } },
  };
}

function adoptedF1(result: EvaluationOverTime): TopLevelSpec | null {
  const values = result.cells
    .filter((cell) => cell.type === 'ALL' && cell.items > 0)
    .flatMap(({ mode, snapshot, items, adopted, adoptedF1: adoptedScore, notAdoptedF1 }) => [
      { mode, snapshot, answers: 'adopted', f1: adoptedScore, count: adopted },
      { mode, snapshot, answers: 'not adopted', f1: notAdoptedF1, count: items - adopted },
    ])
    .filter((value) => value.f1 !== null);
  if (values.length === 0) return null;
  return {
    data: { values },
    facet: { column: { field: 'snapshot', type: 'ordinal', sort: result.snapshots, title: null } },
    spec: {
      width: Math.max(180, 80 * result.modes.length),
      height: 200,
      mark: { type: 'bar' },
      encoding: {
        x: { field: 'mode', type: 'nominal', title: 'mode', scale: { domain: result.modes, paddingInner: 0.25 }, axis: { labelAngle: 0 } },
        xOffset: { field: 'answers', type: 'nominal', scale: { domain: ['adopted', 'not adopted'] } },
        y: { field: 'f1', type: 'quantitative', title: 'F1 (%)', scale: { domain: [0, 100] } },
        color: { field: 'answers', type: 'nominal', title: 'answers', scale: { domain: ['adopted', 'not adopted'], range: ['#2f7d4f', '#c7c7c7'] } },
      },
    },
  };
}

const CHARTS: Array<{ file: string; title: string; subtitle: string; build: (result: EvaluationOverTime) => TopLevelSpec | null }> = [
  {
    file: 'f1-over-snapshots.svg',
    title: 'F1 per mode across snapshots',
    subtitle: 'token F1 of the answers, one panel per item type (ALL: every item)',
    build: f1OverSnapshots,
  },
  {
    file: 'benchmark-size.svg',
    title: 'Benchmark size per snapshot',
    subtitle: 'items of every kind, by how their evidence changed since the previous snapshot',
    build: benchmarkSize,
  },
  {
    file: 'reliability.svg',
    title: 'Reliability of the certainty gate',
    subtitle: 'per bin of p(reliable): its mean against the share of right answers; dashed: perfect calibration; point area: answers',
    build: reliabilityDiagram,
  },
  { file: 'adopted-f1.svg', title: 'F1 of adopted and not-adopted answers', subtitle: 'every item type, one panel per snapshot', build: adoptedF1 },
];

async function toSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Every chart the result has data for, in reading order; a chart with nothing to draw is left out. */
export async function renderCharts(result: EvaluationOverTime): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const { file, title, subtitle, build } of CHARTS) {
    const spec = build(result);
    if (spec !== null) charts.push({ file, title, svg: await toSvg({ ...spec, title: { text: title, subtitle }, config: CONFIG }) });
  }
  return charts;
}
