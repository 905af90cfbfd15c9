import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkPassages } from '../../src/ingest/passages.js';
import { escapeLucene } from '../../src/graph/retrievalRepository.js';
import { contentTerms, termCoverage } from '../../src/text/language.js';
import { DEFAULT_FUSION, fuseCandidates, fusionWeights, lexicalEvidence } from '../../src/retrieval/fusion.js';

describe('passage chunking', () => {
  const sentences = (texts: string[], paragraphStarts: number[] = [0]) => texts.map((text, i) => ({ text, startsParagraph: paragraphStarts.includes(i) }));

  it('packs sentences up to the limit and never crosses a paragraph', () => {
    const passages = chunkPassages(sentences(['aaaa.', 'bbbb.', 'cccc.', 'dddd.'], [0, 3]), 12, 2);
    assert.deepEqual(
      passages.map((p) => p.text),
      ['aaaa. bbbb.', 'cccc.', 'dddd.'],
    );
    assert.deepEqual(passages[0]!.pieces, [
      { sentence: 0, offset: 0, from: 0, to: 5 },
      { sentence: 1, offset: 6, from: 0, to: 5 },
    ]);
  });

  it('cuts an over-long sentence into overlapping windows', () => {
    const passages = chunkPassages(sentences(['0123456789abcdefghij']), 8, 2);
    assert.deepEqual(
      passages.map((p) => p.text),
      ['01234567', '6789abcd', 'cdefghij'],
    );
    assert.deepEqual(
      passages.map((p) => p.pieces),
      [[{ sentence: 0, offset: 0, from: 0, to: 8 }], [{ sentence: 0, offset: 0, from: 6, to: 14 }], [{ sentence: 0, offset: 0, from: 12, to: 20 }]],
    );
  });

  it('keeps the passages of untouched paragraphs when another paragraph changes', () => {
    const before = chunkPassages(sentences(['One.', 'Two.', 'Three.', 'Four.'], [0, 2]));
    const after = chunkPassages(sentences(['One changed.', 'Two.', 'Three.', 'Four.'], [0, 2]));
    assert.equal(before[1]!.text, after[1]!.text);
    assert.notEqual(before[0]!.text, after[0]!.text);
  });

  it('judges a lexical match on the stems of the query words that are not stop words', () => {
    const query = contentTerms('Who is the prime minister of France?');
    assert.deepEqual([...query].sort(), ['franc', 'minist', 'prime']);
    assert.equal(termCoverage(query, 'Michel Barnier has been Prime Minister of France since September.'), 1);
    assert.equal(termCoverage(query, 'The ministers of France met the president.'), 2 / 3, 'minist and franc, not prime');
    assert.equal(termCoverage(contentTerms('Who is the Gallic premier?'), 'Michel Barnier has been Prime Minister of France.'), 0);
    assert.equal(termCoverage(contentTerms('who is it?'), 'anything at all'), 0, 'a query of stop words covers nothing');
  });

  it('escapes Lucene syntax so user text is searched as words', () => {
    assert.equal(escapeLucene('who is (the) PM? a+b'), 'who is \\(the\\) PM\\? a\\+b');
  });
});

describe('hybrid fusion weights', () => {
  const hit = (score: number, text: string, searchText?: string) => ({ score, text, searchText });

  it('judges the lexical top hit on its title and text, its margin and its score per question word', () => {
    const evidence = lexicalEvidence('Who is the club president of FC Bayern Munich?', [
      hit(8, 'Herbert Hainer has been club president since 2019.', 'FC Bayern Munich\nHerbert Hainer has been club president since 2019.'),
      hit(4, 'Florentino Pérez has been club president since 2009.'),
    ]);
    assert.deepEqual(evidence, { coverage: 1, margin: 0.5, scorePerTerm: 8 / 5 });
    assert.equal(
      lexicalEvidence('Who is the club president of FC Bayern Munich?', [hit(8, 'Herbert Hainer has been club president since 2019.')]).coverage,
      2 / 5,
    );
    assert.deepEqual(lexicalEvidence('anything', []), { coverage: 0, margin: 0, scorePerTerm: 0 });
  });

  it('lets the lexical list count only when all three clear the chosen thresholds', () => {
    const counted = { dense: DEFAULT_FUSION.denseWeight, lexical: DEFAULT_FUSION.lexicalWeight };
    const denseAlone = { dense: DEFAULT_FUSION.denseWeight, lexical: 0 };
    const strong = { coverage: 1, margin: 0.5, scorePerTerm: 2 };
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, strong, 30), counted);
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, coverage: 0.5 }, 30), denseAlone, 'a top hit holding half the words');
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, margin: 0.01 }, 30), denseAlone, 'a flat BM25 list');
    assert.deepEqual(fusionWeights(DEFAULT_FUSION, { ...strong, scorePerTerm: 0.5 }, 30), denseAlone, 'weak matches of common words');
    assert.deepEqual(fusionWeights({ method: 'weighted', denseWeight: 0.5, lexicalWeight: 0.5 }, { coverage: 0, margin: 0, scorePerTerm: 0 }, 30), {
      dense: 0.5,
      lexical: 0.5,
    });
  });

  // BM25 hits for a question worded unlike them: the lexical list does not count.
  const kneadQuestion = 'Who kneads the dough for the loaves?';
  const breadHits = [
    { id: 'b', score: 1.2, text: 'Bread is baked.' },
    { id: 'a', score: 1.1, text: 'Bread rises.' },
    { id: 'c', score: 0.3, text: 'Flour.' },
  ];

  it('keeps BM25 order when there is no dense list, however weak the lexical evidence', async () => {
    const fused = await fuseCandidates(kneadQuestion, [], breadHits, DEFAULT_FUSION);
    assert.deepEqual(
      fused.map((hit) => hit.id),
      ['b', 'a', 'c'],
    );
    assert.ok(fused[0]!.score > fused[1]!.score && fused[1]!.score > fused[2]!.score);
  });

  it('ranks hits tied at the tail as the retrievers did, not by id', async () => {
    // A short dense list and a lexical list that does not count: every lexical-only hit and the
    // last dense hit (min-max puts it at 0) score 0.
    const dense = [
      { id: 'z1', score: 0.9, text: 'Bakers knead dough before the loaves are shaped.' },
      { id: 'z2', score: 0.5, text: 'The dough rests overnight.' },
    ];
    const fused = await fuseCandidates(kneadQuestion, dense, breadHits, DEFAULT_FUSION);
    assert.deepEqual(
      fused.map((hit) => hit.id),
      ['z1', 'z2', 'b', 'a', 'c'],
    );
    const both = await fuseCandidates(
      'q',
      [
        { id: 'y', score: 1, text: '' },
        { id: 'x', score: 0, text: '' },
      ],
      [
        { id: 'w', score: 2, text: '' },
        { id: 'v', score: 1, text: '' },
      ],
      { method: 'weighted', denseWeight: 0.4, lexicalWeight: 0.6 },
    );
    assert.deepEqual(
      both.map((hit) => hit.id),
      ['w', 'y', 'v', 'x'],
      'a 0-0 tie goes to the heavier list first',
    );
  });
});
