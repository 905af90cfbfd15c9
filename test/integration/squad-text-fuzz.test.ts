/**
 * No text makes the annotation, question reading and reader code throw: every real paragraph of
 * the SQuAD dev subset cut at every token (a retrieved sentence often ends mid-phrase, "She
 * studied at the University of"). Over 100,000 texts, a minute and more: not in the unit tier.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { projectRoot } from '../../src/platform/paths.js';
import { annotate } from '../../src/text/annotation.js';
import { readQaFile } from '../../eval/qaFile.js';
import { readQuestion, readText } from '../support/textFuzz.js';

describe('text robustness on real paragraphs', () => {
  it('every SQuAD dev paragraph, each sentence cut after every token and the paragraph after every sentence', { timeout: 300_000 }, async () => {
    const items = await readQaFile(join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz'));
    const paragraphs = new Map(items.map((item) => [item.documents[0]!.text, item.question]));
    let cuts = 0;
    for (const [text, question] of paragraphs) {
      const asked = readQuestion(question);
      const sentences = annotate(text);
      let prefix = '';
      for (const sentence of sentences) {
        for (let end = 1; end <= sentence.tokens.length; end++) {
          readText(
            asked,
            sentence.tokens
              .slice(0, end)
              .map((token, i) => (i === 0 ? token.text : token.space + token.text))
              .join(''),
          );
          cuts++;
        }
        prefix = prefix === '' ? sentence.text : `${prefix} ${sentence.text}`;
        readText(asked, prefix);
      }
    }
    assert.equal(paragraphs.size, 913);
    assert.ok(cuts > 100_000, `${cuts} cuts`);
  });
});
