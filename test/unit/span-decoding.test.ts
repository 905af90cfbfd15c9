// How the reader's start and end scores become an answer's words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bestSpan, MAX_PASSAGE_WORDS } from '../../src/qa/reader/spanReader.js';
import { readerPassage } from '../../src/qa/reader/wordFeatures.js';

/** The span read when the start score peaks on word `from` and the end score on word `to`. */
function read(text: string, from: string, to: string): string | undefined {
  const passage = readerPassage(text, MAX_PASSAGE_WORDS);
  const peak = (word: string) => Float32Array.from(passage.words, (token) => (token.text === word ? 10 : 0));
  return bestSpan(passage, peak(from), peak(to))?.text;
}

describe('the span a reader reads', () => {
  it('ends where a run of capitalised words ends, not after its first words, nor across "of"', () => {
    assert.equal(read('In 1990 he won the Japan Prize for his work.', 'Japan', 'Japan'), 'Japan Prize');
    assert.equal(read('The record fell to Kelvin Kiptum of Kenya in 2023.', 'Kelvin', 'Kiptum'), 'Kelvin Kiptum');
  });

  it('keeps the start the scores chose: a title before a name stays out', () => {
    assert.equal(read('NFL Commissioner Roger Goodell opened the draft.', 'Roger', 'Goodell'), 'Roger Goodell');
  });
});
