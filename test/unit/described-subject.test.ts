import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describedBy, describingPhrase } from '../../src/qa/describedSubject.js';

const describes = (question: string, attribute: string, phrase: string): void => {
  const found = describingPhrase(question, attribute);
  assert.equal(found && question.slice(found.from, found.to), phrase, `${question} | ${attribute}`);
};
const asks = (question: string, attribute: string): void => assert.equal(describingPhrase(question, attribute), null, `${question} | ${attribute}`);

describe('a question that names its subject by a fact', () => {
  it('reads the fact as the subject where a preposition opens a phrase of names ending in the attribute', () => {
    describes('Who chairs the directors at the ChatGPT developer?', 'Developer', 'the ChatGPT developer');
    describes('Which tech giant is the biggest financial backer of the ChatGPT developer?', 'Developer', 'the ChatGPT developer');
    describes('Who leads the body staging the 2024 Games in the French capital?', 'Capital', 'the French capital');
    describes("Who is the mayor of France's capital since 2020?", 'Capital', "France's capital");
  });

  it('reads the attribute as asked where the question asks for it', () => {
    asks('Who is the ChatGPT developer?', 'Developer');
    asks('What is the capital of France?', 'Capital');
    asks('Who is the president of the French Senate?', 'President of the Senate');
    asks("Who was Liverpool's manager last year?", 'Manager');
    asks('Who is the head coach of the Red Devils?', 'Head coach');
  });

  it('reads no subject in a phrase without a name, or with nothing asked before it', () => {
    asks('Who did Milei beat in the runoff?', 'Runoff');
    asks('Who is in the French capital?', 'Capital');
  });

  it('keeps a preposition between capitalised words and an attribute written with a capital inside the name (found on the demo sets)', () => {
    asks("What is the Bank of Japan's policy rate?", 'Policy rate');
    asks("What was the Bank of England's Bank Rate in October 2024?", 'Bank Rate');
    asks('When was the first championship of World Chess Championship?', 'First championship');
  });

  it('asks the question of the fact’s value in the phrase’s place', () => {
    assert.deepEqual(describedBy('Who chairs the directors at the ChatGPT developer?', { attribute: 'Developer', value: 'OpenAI' }), {
      value: 'OpenAI',
      phrase: 'the ChatGPT developer',
      askedOf: 'Who chairs the directors at OpenAI?',
    });
    assert.equal(describedBy('Who is the ChatGPT developer?', { attribute: 'Developer', value: 'OpenAI' }), null);
  });
});
