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

  it('takes a short list item whole, up to a spaced dash or a bracket', () => {
    assert.equal(read('-: Per Larsson Sparre', 'Larsson', 'Sparre'), 'Per Larsson Sparre');
    assert.equal(read('- Prince Leopold of Bavaria - Later a Generalfeldmarschall', 'Prince', 'Leopold'), 'Prince Leopold of Bavaria');
    assert.equal(read('-: Claës-Henrik Nordenskiöld', 'Henrik', 'Nordenskiöld'), 'Claës-Henrik Nordenskiöld');
    assert.equal(read('- Prince Leopold of Bavaria - Later a Generalfeldmarschall', 'Later', 'Generalfeldmarschall'), 'Later a Generalfeldmarschall');
    assert.equal(read('- President of the Federal Council: Franco Corleone', 'Corleone', 'Corleone'), 'Franco Corleone', 'after its label');
    assert.equal(read('- - Michael Whitney Straight and Nina G. Auchincloss Steers', 'Michael', 'Straight'), 'Michael Whitney Straight', 'two names');
    assert.equal(
      read('- The town of Washinomiya merged with the village of Sakurada to form the new town', 'Washinomiya', 'Washinomiya'),
      'Washinomiya',
      'a long item is a sentence, read as one',
    );
  });

  it('ends before a bracket it opens but does not close', () => {
    assert.equal(read('-: Trond Einar Olaussen (Ap)', 'Trond', 'Ap'), 'Trond Einar Olaussen');
    assert.equal(read('The London Midland and Scottish Railway (LMS) built 162 of them.', 'London', 'LMS'), 'London Midland and Scottish Railway');
    assert.equal(read('It went to Marriott (Hot Shoppes) Inc in 1960.', 'Marriott', 'Inc'), 'Marriott (Hot Shoppes) Inc');
  });
});
