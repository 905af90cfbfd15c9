// What the reader is trained on: TimeQA questions each with the paragraph of its page that answers it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { QaItem } from '../../eval/qaFile.js';
import { timeQaParagraphItems } from '../../eval/timeqa.js';

const PAGE = [
  'Gary Mills is an English football manager.',
  'He managed Tamworth from 2001 to 2002, then Alfreton Town.',
  'He managed Alfreton Town of the Conference North from 2005 to 2007.',
].join('\n\n');

const item = (question: string, answers: string[]): QaItem => ({
  question,
  answers,
  context: ['Gary Mills'],
  documents: [{ id: 'gary-mills', title: 'Gary Mills', text: PAGE }],
  asOf: null,
  type: null,
  previousAnswers: [],
});

describe('TimeQA paragraphs for training the reader', () => {
  it('takes the paragraph holding the answer that states the asked years', () => {
    const [chosen] = timeQaParagraphItems([item('Which team did Gary Mills coach from 2005 to 2007?', ['Alfreton Town'])]);
    assert.equal(chosen?.documents.length, 1);
    assert.equal(chosen?.documents[0]?.text, 'He managed Alfreton Town of the Conference North from 2005 to 2007.');
  });

  it('takes the first paragraph holding the answer when none states the years, and leaves out what no paragraph answers', () => {
    const chosen = timeQaParagraphItems([
      item('Which team did Gary Mills coach in 1999?', ['Alfreton Town']),
      item('Which team did Gary Mills coach in 1995?', ['Notts County']),
      item('Which team did Gary Mills coach in 2030?', []),
    ]);
    assert.deepEqual(
      chosen.map((chosenItem) => chosenItem.documents[0]?.text),
      ['He managed Tamworth from 2001 to 2002, then Alfreton Town.'],
    );
  });
});
