import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corpusBleu } from '../../eval/overTime/bleu.js';
import { scoreCell, sizesOf, type TimedItem } from '../../eval/overTime/evaluateOverTime.js';
import { DecisionAction, type AnswerResult } from '../../src/qa/types.js';

describe('corpus BLEU-4', () => {
  it('is 100 for identical text and 0 when no 4-gram matches', () => {
    assert.equal(corpusBleu([{ hypothesis: 'the tower was built in 1889 by eiffel', reference: 'The tower was built in 1889 by Eiffel.' }]), 100);
    assert.equal(corpusBleu([{ hypothesis: 'paris', reference: 'the capital is paris' }]), 0);
  });

  it('matches a hand computation with clipping and the brevity penalty', () => {
    // SQuAD normalisation drops "the"/"a": hypothesis "cat sat on mat" (4), reference "cat sat on red mat" (5).
    // Precisions: 1-gram 4/4, 2-gram 2/3, 3-gram 1/2 ("cat sat on"), 4-gram 0/1 → 0. Use a second pair to lift 4-grams.
    const pairs = [
      { hypothesis: 'the cat sat on the mat', reference: 'the cat sat on the red mat' },
      { hypothesis: 'dogs bark at night loudly', reference: 'dogs bark at night loudly' },
    ];
    // Totals: hypothesis length 4 + 5 = 9, reference 5 + 5 = 10.
    // 1-grams 9/9; 2-grams (2 + 4)/(3 + 4) = 6/7; 3-grams (1 + 3)/(2 + 3) = 4/5; 4-grams (0 + 2)/(1 + 2) = 2/3.
    const expected = 100 * Math.exp(1 - 10 / 9) * Math.exp((Math.log(1) + Math.log(6 / 7) + Math.log(4 / 5) + Math.log(2 / 3)) / 4);
    assert.ok(Math.abs(corpusBleu(pairs) - expected) < 1e-9, `${corpusBleu(pairs)} vs ${expected}`);
    // A repeated word is counted at most as often as the reference has it.
    assert.equal(corpusBleu([{ hypothesis: 'paris paris paris paris', reference: 'paris is big city' }]), 0);
  });
});

describe('one cell of the evaluation over time', () => {
  const item = (question: string, answers: string[], extra: Partial<TimedItem> = {}): TimedItem => ({
    question,
    answers,
    context: [],
    documents: [],
    asOf: new Date('2024-01-01T00:00:00Z'),
    type: 'NEW',
    previousAnswers: [],
    snapshot: '2024-01-01',
    ...extra,
  });
  const result = (guess: string | null, adopted: boolean, action: DecisionAction, hits: string[] = []): AnswerResult =>
    ({
      question: '',
      text: adopted ? guess : null,
      guess,
      adopted,
      certainty: null,
      decision: { action, timeSensitive: false, cues: [], changedSince: [] },
      candidates: [],
      rounds: [{ round: 1, query: '', omega: 0, hits: hits.map((text, rank) => ({ kind: 'PASSAGE', id: `p${rank}`, articleId: 'a', text })) }],
    }) as unknown as AnswerResult;

  it('scores EM, F1, match, evidence hits, the decision, adopted and not-adopted F1, by hand', () => {
    const rows = [
      // Right and adopted, evidence retrieved; closed book was wrong and ADAPTIVE retrieved: a right decision.
      {
        item: item('q1', ['Gabriel Attal'], { evidence: ['Gabriel Attal became prime minister in 2024.'] }),
        result: result('Gabriel Attal', true, DecisionAction.RETRIEVE, ['France. Gabriel Attal became prime minister in 2024. More.']),
        closedBook: result('Élisabeth Borne', false, DecisionAction.NO_RETRIEVE),
      },
      // Half right (F1 2/3), not adopted, evidence missed; closed book right but ADAPTIVE retrieved: a wrong decision.
      {
        item: item('q2', ['Eiffel Tower'], { evidence: ['The Eiffel Tower is in Paris.'] }),
        result: result('Tower', false, DecisionAction.RETRIEVE, ['Something else.']),
        closedBook: result('Eiffel Tower', false, DecisionAction.NO_RETRIEVE),
      },
      // Wrong, not adopted, no evidence known; closed book wrong, ADAPTIVE did not retrieve: a wrong decision.
      { item: item('q3', ['1889']), result: result('1900', false, DecisionAction.NO_RETRIEVE), closedBook: result('1900', false, DecisionAction.NO_RETRIEVE) },
    ];
    const cell = scoreCell({ mode: 'ADAPTIVE', snapshot: '2024-01-01', type: 'ALL' }, rows);
    assert.equal(cell.items, 3);
    assert.equal(cell.em, 33.33); // 1 of 3
    assert.equal(cell.f1, Number(((100 * (1 + 2 / 3 + 0)) / 3).toFixed(2))); // "Tower" vs "Eiffel Tower": P 1, R 1/2, F1 2/3
    assert.equal(cell.match, 33.33); // only "Gabriel Attal" contains its gold answer
    assert.equal(cell.retrievalHit, 50); // 1 of the 2 items with evidence
    assert.equal(cell.decisionAccuracy, 33.33); // 1 of 3
    assert.equal(cell.adopted, 1);
    assert.equal(cell.adoptedF1, 100);
    assert.equal(cell.notAdoptedF1, Number(((100 * (2 / 3 + 0)) / 2).toFixed(2)));
    assert.equal(cell.bleu, null, 'no dialogue turns');
    const turns = scoreCell({ mode: 'ALWAYS', snapshot: '2024-01-01', type: 'ALL' }, [
      {
        item: item('q', ['it was built in 1889 by eiffel'], { kind: 'DIALOGUE_TURN' }),
        result: result('it was built in 1889 by eiffel', true, DecisionAction.RETRIEVE),
        closedBook: null,
      },
    ]);
    assert.equal(turns.bleu, 100);
    assert.equal(turns.decisionAccuracy, null, 'without closed-book answers the decision is not measured');
  });

  it('sizes a file by snapshot, kind and type', () => {
    const sizes = sizesOf([item('a', ['x']), item('b', ['y']), item('c', ['z'], { type: 'CHANGED', kind: 'TEXT_QA', snapshot: '2025-01-01' })]);
    assert.deepEqual(sizes, [
      { snapshot: '2024-01-01', kind: 'IMPORTED', type: 'NEW', count: 2 },
      { snapshot: '2025-01-01', kind: 'TEXT_QA', type: 'CHANGED', count: 1 },
    ]);
  });
});
