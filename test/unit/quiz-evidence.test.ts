import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listsOptions, quizObjection } from '../../src/qa/quizEvidence.js';

const QUIZ =
  'Which element has the chemical symbol Fe? a) Lead b) Iron c) Tin d) Gold. Which planet is known as the Red Planet? Venus, Mars, Jupiter or Saturn?';
const objection = (question: string, answer: string, evidence: string): string | null => quizObjection(question, answer, evidence);

describe('quiz snippets', () => {
  it('tells a list of options from a list that answers', () => {
    for (const options of ['£2,000; £5,000; £10,000', 'Venus, Mars, Jupiter or Saturn', 'a) Lead b) Iron c) Tin d) Gold'])
      assert.ok(listsOptions(options), options);
    // TimeQA answers: a list of places with no "or", two names, a pair.
    for (const answer of ['Quito, Caracas, Cancún', 'Caroline Kennedy, Jacqueline Kennedy', 'Mars or Venus', 'Lewis and Clark'])
      assert.ok(!listsOptions(answer), answer);
  });

  it('objects to an answer that is a list of options, wherever it is read', () => {
    assert.match(objection('Which planet is red?', 'Venus, Mars, Jupiter or Saturn', QUIZ) ?? '', /reads as a list of options/);
  });

  it('objects to any answer read in a passage that asks the question and lists its options', () => {
    assert.match(objection('Which element has the chemical symbol Fe?', 'Iron', QUIZ) ?? '', /ask the question themselves .* list options/);
    assert.match(objection('Which planet is known as the Red Planet?', 'Mars', QUIZ) ?? '', /ask the question themselves/);
  });

  it('reads no options in a sentence whose items are clauses', () => {
    for (const sentence of [
      'It is Mars, whose iron oxide, dust, or rust gives it colour.',
      'The answer is Mars, not Venus, Jupiter or Saturn.',
      'Manchester City beat Inter 1–0 in Istanbul; Rodri scored; Guardiola won his third title.',
      'He was born in Paris, France, in 1950 or 1951.',
    ])
      assert.ok(!listsOptions(sentence), sentence);
  });

  it('lets a passage answer the question it asks', () => {
    assert.equal(
      objection('Which element has the chemical symbol Fe?', 'iron', 'Which element has the chemical symbol Fe? It is iron, from the Latin ferrum.'),
      null,
    );
    assert.equal(objection('Which metal rusts in water?', 'Iron', QUIZ), null, 'another question than the quiz asks');
    assert.equal(
      objection(
        'Which planet is known as the Red Planet?',
        'Mars',
        'Many people ask: which planet is known as the Red Planet? The answer is Mars, not Venus, Jupiter or Saturn.',
      ),
      null,
      'a passage that quotes the question and answers it',
    );
  });
});
