import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Runtime } from '../../src/app/runtime.js';
import { article, day, execute, openTestRuntime, resetKnowledge } from '../support/runtime.js';

/**
 * Passages of the kinds that RetrievalQA's web pool holds and that the gate adopted wrong answers
 * from (issue 32): a quiz that asks the question and lists its options, a report of a neighbouring
 * event, and a sentence whose nearest name is of another type than asked. Written here.
 */
const QUIZ = article(
  'Weekly quiz',
  'Quiz of the week. What is the maximum fine for watching live television without a TV licence in the UK? Options: £2,000; £5,000; £10,000. ' +
    'Which planet is known as the Red Planet? Venus, Mars, Jupiter or Saturn? The answers are given at the end of the page.',
);
const FIRST_DEBATE = article(
  'First Republican primary debate',
  'The first Republican presidential primary debate was held in Milwaukee on 23 August 2023. Eight Republican candidates took part in the debate; Donald Trump did not attend.',
);
const KENYA = article(
  '2022 Kenyan general election',
  'William Ruto won the 2022 Kenyan presidential election. He was sworn in as the fifth president of Kenya on 13 September 2022 in Nairobi.',
);

const ASK = `query($q: String!, $asOf: DateTime) { ask(question: $q, asOf: $asOf, retrieval: ADAPTIVE) { text guess adopted timeScope { kind from to } decision { cues } } }`;

describe('noisy evidence: quizzes, neighbouring events, another type', () => {
  let runtime: Runtime;
  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    await runtime.services.ingest.ingest([QUIZ, FIRST_DEBATE, KENYA], { takenAt: day('2023-09-01'), source: 'test' });
    await runtime.services.retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  const ask = async (q: string, asOf: string): Promise<any> => {
    const { data, errors } = await execute(runtime, ASK, { q, asOf });
    assert.equal(errors, undefined, q);
    return data.ask;
  };

  it('adopts no option of a quiz that asks the question itself', async () => {
    for (const q of ['What is the maximum fine for watching live television without a TV licence in the UK?', 'Which planet is known as the Red Planet?']) {
      const answer = await ask(q, '2023-12-08');
      assert.equal(answer.adopted, false, `${q} adopted "${answer.guess}"`);
      assert.equal(answer.text, null);
      assert.match(answer.decision.cues[0], /list options, as a quiz does|reads as a list of options/, q);
    }
  });

  it("does not answer this week's debate from a report of another one", async () => {
    const answer = await ask('How many Republican candidates participated in the debate this week?', '2023-12-08');
    assert.deepEqual(answer.timeScope, { kind: 'DURING', from: '2023-12-04T00:00:00.000Z', to: '2023-12-11T00:00:00.000Z' });
    assert.equal(answer.adopted, false, `adopted "${answer.guess}"`);
    assert.match(answer.decision.cues[0], /^not adopted: no text the store knew as of 2023-12-08 states a time in "this week"/);
    // Asked without the week, the same passage answers.
    const first = await ask('How many Republican candidates took part in the first primary debate?', '2023-12-08');
    assert.equal(first.guess, 'Eight');
  });

  it('adopts no place for a who-question', async () => {
    const answer = await ask('Who was sworn in as president of Kenya in September 2022?', '2023-12-08');
    assert.ok(answer.guess === 'William Ruto' || !answer.adopted, `adopted "${answer.guess}"`);
  });
});
