import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { carryOver } from '../../src/benchmarks/benchmarkMaintenance.js';
import {
  changedSentences,
  isCandidateParagraph,
  isFirstSnapshot,
  newSentenceRuns,
  onePerCluster,
  paragraphsOf,
  type GroupSentence,
} from '../../src/benchmarks/evidenceGroups.js';
import type { AffectedItem } from '../../src/graph/benchmarkRepository.js';

const sentence = (id: string, text: string, extra: Partial<GroupSentence> = {}): GroupSentence => ({
  id,
  text,
  startsParagraph: false,
  origin: null,
  createdHere: true,
  previousText: null,
  ...extra,
});
const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('which sentences benchmark items are drafted from (GrowOVER-QA)', () => {
  it('selects paragraphs of fewer than 5 sentences and 300 to 600 characters', () => {
    const long = words(60).slice(0, 140) + '.';
    const paragraph = (id: string, count: number, text = long): GroupSentence[] =>
      Array.from({ length: count }, (_, i) => sentence(`${id}${i}`, text, { startsParagraph: i === 0 }));
    const paragraphs = paragraphsOf([...paragraph('a', 3), ...paragraph('b', 5), ...paragraph('c', 1), ...paragraph('d', 4, words(40).slice(0, 160) + '.')]);
    assert.deepEqual(
      paragraphs.map((p) => p.sentences.length),
      [3, 5, 1, 4],
    );
    // a: 3 × 141 chars + spaces = 425 (kept); b: 5 sentences (too many); c: 141 chars (too short); d: 4 × 161 + 3 = 647 (too long).
    assert.deepEqual(
      paragraphs.map((p) => isCandidateParagraph(p.sentences)),
      [true, false, false, false],
    );
    const bounds = (length: number) => isCandidateParagraph([sentence('x', 'y'.repeat(length))]);
    assert.deepEqual([bounds(299), bounds(300), bounds(600), bounds(601)], [false, true, true, false]);
  });

  it('clusters into at most 4 groups from a fixed seed: the same rows every time, one per cluster', () => {
    const vector = (angle: number): Float32Array => new Float32Array([Math.cos(angle), Math.sin(angle), 0]);
    // Four tight groups of three around 0, 90, 180 and 270 degrees, shuffled.
    const angles = [0, 1.57, 3.14, 4.71].flatMap((base) => [base - 0.05, base, base + 0.05]);
    const order = [7, 2, 11, 0, 5, 9, 3, 1, 10, 6, 4, 8];
    const vectors = order.map((i) => vector(angles[i]!));
    const chosen = onePerCluster(vectors);
    assert.equal(chosen.length, 4);
    assert.deepEqual(new Set(chosen.map((row) => Math.floor(order[row]! / 3))), new Set([0, 1, 2, 3]), 'one row from each group');
    for (let run = 0; run < 5; run++) assert.deepEqual(onePerCluster(vectors), chosen);
    assert.deepEqual(onePerCluster(vectors.slice(0, 3)), [0, 1, 2], 'as many rows as clusters: all of them');
  });

  it('drafts later snapshots from runs of NEW sentences, split above 6, and from each CHANGED sentence', () => {
    const later = (origin: string | null, createdHere = true): Partial<GroupSentence> => ({ origin, createdHere });
    const sentences = [
      sentence('k0', 'kept', later(null, false)),
      ...Array.from({ length: 8 }, (_, i) => sentence(`n${i}`, `new ${i}`, later('NEW'))),
      sentence('c0', 'changed', { ...later('CHANGED'), previousText: 'before' }),
      sentence('n8', 'new again', later('NEW')),
      sentence('m0', 'moved', later('UNCHANGED')),
    ];
    assert.equal(isFirstSnapshot(sentences), false);
    assert.deepEqual(
      newSentenceRuns(sentences).map((group) => group.sentences.map((s) => s.id)),
      [['n0', 'n1', 'n2', 'n3'], ['n4', 'n5', 'n6', 'n7'], ['n8']],
    );
    assert.deepEqual(
      changedSentences(sentences).map((group) => [group.type, group.sentences[0]!.id, group.sentences[0]!.previousText]),
      [['CHANGED', 'c0', 'before']],
    );
    assert.equal(isFirstSnapshot([sentence('a', 'first'), sentence('b', 'also first')]), true);
  });
});

describe("GrowOVER's maintenance rule (Algorithm 4)", () => {
  const item = (evidence: AffectedItem['evidence'], kind: AffectedItem['kind'] = 'TEXT_QA', answers = ['1998']): AffectedItem => ({
    versionId: 'v',
    itemId: 'i',
    kind,
    answers,
    evidence,
  });
  const open = (id: string, text = 'It opened in 1998.') => ({ id, text, closed: false, successors: [] });

  it('carries an item over when its closed sentences were only moved or reworded, remapping them to their successors', () => {
    const decision = carryOver(
      item([open('s1'), { id: 's2', text: 'old', closed: true, successors: [{ id: 's2b', text: 'It opened in 1998.', label: 'UNCHANGED' }] }]),
    );
    assert.deepEqual(decision, { action: 'carry', sentenceIds: ['s1', 's2b'], factId: null, answers: ['1998'] });
  });

  it('follows a split to every part and a merge to the one sentence', () => {
    const split = carryOver(
      item([
        {
          id: 's',
          text: 'old',
          closed: true,
          successors: [
            { id: 'a', text: 'Built in 1998.', label: 'UNCHANGED' },
            { id: 'b', text: 'It is tall.', label: 'UNCHANGED' },
          ],
        },
      ]),
    );
    assert.deepEqual(split, { action: 'carry', sentenceIds: ['a', 'b'], factId: null, answers: ['1998'] });
    const merged = carryOver(
      item([
        { id: 'x', text: 'old', closed: true, successors: [{ id: 'm', text: 'Built in 1998 and tall.', label: 'UNCHANGED' }] },
        { id: 'y', text: 'old', closed: true, successors: [{ id: 'm', text: 'Built in 1998 and tall.', label: 'UNCHANGED' }] },
      ]),
    );
    assert.deepEqual(merged, { action: 'carry', sentenceIds: ['m'], factId: null, answers: ['1998'] });
  });

  it('retires an item whose sentence changed, was deleted, or no longer states the answer', () => {
    assert.deepEqual(carryOver(item([{ id: 's', text: 'old', closed: true, successors: [{ id: 't', text: 'It opened in 2001.', label: 'CHANGED' }] }])), {
      action: 'retire',
    });
    assert.deepEqual(carryOver(item([open('s1'), { id: 's2', text: 'old', closed: true, successors: [] }])), { action: 'retire' });
    assert.deepEqual(carryOver(item([{ id: 's', text: 'old', closed: true, successors: [{ id: 't', text: 'It opened long ago.', label: 'UNCHANGED' }] }])), {
      action: 'retire',
    });
  });

  it('looks for the answer in the whole new evidence: an untouched sentence may hold it while another one moved', () => {
    const decision = carryOver(
      item([
        open('s1', 'The hall opened in 1998.'),
        { id: 's2', text: 'It is tall.', closed: true, successors: [{ id: 's2b', text: 'It is tall.', label: 'UNCHANGED' }] },
      ]),
    );
    assert.deepEqual(decision, { action: 'carry', sentenceIds: ['s1', 's2b'], factId: null, answers: ['1998'] });
  });

  it("carries a dialogue turn over moved evidence on the label alone: the expert's reply is in their own words", () => {
    const turn = item(
      [{ id: 's', text: 'It opened in 1998.', closed: true, successors: [{ id: 't', text: 'The hall opened in 1998.', label: 'UNCHANGED' }] }],
      'DIALOGUE_TURN',
      ['It has been open since the late nineties.'],
    );
    assert.deepEqual(carryOver(turn), { action: 'carry', sentenceIds: ['t'], factId: null, answers: ['It has been open since the late nineties.'] });
  });

  it('carries a fact question over a refined value (with the new spelling as its answer) and retires it on an update or removal', () => {
    const refined = carryOver(
      item([{ id: 'f1', text: 'old', closed: true, successors: [{ id: 'f2', text: 'Élisabeth Borne', label: 'REFINED' }] }], 'FACT_QA', ['Elisabeth Borne']),
    );
    assert.deepEqual(refined, { action: 'carry', sentenceIds: [], factId: 'f2', answers: ['Élisabeth Borne', 'Elisabeth Borne'] });
    assert.deepEqual(
      carryOver(item([{ id: 'f1', text: 'old', closed: true, successors: [{ id: 'f2', text: 'Gabriel Attal', label: 'UPDATED' }] }], 'FACT_QA')),
      { action: 'retire' },
    );
    assert.deepEqual(carryOver(item([{ id: 'f1', text: 'old', closed: true, successors: [] }], 'FACT_QA')), { action: 'retire' });
  });
});
