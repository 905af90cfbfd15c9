import assert from 'node:assert/strict';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assignOrderKeys } from '../../src/ingest/articlePlan.js';
import { InvalidSnapshotError } from '../../src/ingest/errors.js';
import { diffFacts } from '../../src/ingest/factDiff.js';
import { classifyValueEdit } from '../../src/ingest/valueEdits.js';
import { ExactMatchLabeler } from '../../src/ingest/sentenceLabeler.js';
import type { PreviousSentence } from '../../src/domain/plan.js';
import { splitSentences } from '../../src/ingest/sentenceSplitter.js';
import { readSnapshotFile } from '../../src/ingest/snapshotReader.js';
import { MAX_BATCH_BYTES, MAX_BATCH_INFOBOX_ENTRIES, MAX_PARAGRAPH_BYTES, sizeProblems, transactionBatches } from '../../src/ingest/inputLimits.js';

describe('sentence splitting', () => {
  it('keeps abbreviations inside sentences and marks paragraph starts', () => {
    const sentences = splitSentences(
      'Dr. Smith moved to the U.S. in 2001. He works at Acme Inc. now.\n\nThe budget was $3.5 million, e.g. for roads. It opened at 9 a.m. on Monday.',
    );
    assert.deepEqual(
      sentences.map((s) => [s.text, s.startsParagraph]),
      [
        ['Dr. Smith moved to the U.S. in 2001.', true],
        ['He works at Acme Inc. now.', false],
        ['The budget was $3.5 million, e.g. for roads.', true],
        ['It opened at 9 a.m. on Monday.', false],
      ],
    );
  });
});

describe('sentence labeling', () => {
  const previous = (texts: string[]): PreviousSentence[] => texts.map((text, i) => ({ id: `old${i}`, text, startsParagraph: i === 0 }));
  const current = (texts: string[]) => texts.map((text, i) => ({ text, startsParagraph: i === 0 }));
  const labeler = new ExactMatchLabeler();

  it('labels unchanged, changed (same place), new and deleted sentences', () => {
    const result = labeler.label(previous(['A.', 'B.', 'C.', 'D.', 'E.']), current(['A.', 'B2.', 'C.', 'X.', 'E.', 'F.']));
    assert.deepEqual(result.alignments, [
      { kind: 'KEPT', previousId: 'old0' },
      { kind: 'CHANGED', previousId: 'old1' },
      { kind: 'KEPT', previousId: 'old2' },
      { kind: 'CHANGED', previousId: 'old3' },
      { kind: 'KEPT', previousId: 'old4' },
      { kind: 'NEW' },
    ]);
    assert.deepEqual(result.deletedIds, []);
  });

  it('reports sentences with no successor as deleted, and moved text as relocated', () => {
    const result = labeler.label(previous(['A.', 'B.', 'C.', 'D.']), current(['A.', 'D.', 'B.']));
    assert.equal(result.alignments[0]!.kind, 'KEPT');
    assert.deepEqual(result.alignments.map((a) => a.kind).sort(), ['KEPT', 'KEPT', 'RELOCATED'].sort());
    assert.deepEqual(result.deletedIds, ['old2']);
  });

  it('ignores whitespace and curly quotes when matching', () => {
    const result = labeler.label(previous(['He said \u201Chi\u201D.']), current(['He  said "hi".']));
    assert.deepEqual(result.alignments, [{ kind: 'KEPT', previousId: 'old0' }]);
  });
});

describe('order keys', () => {
  it('keeps kept keys and fits new keys between their neighbours, in order', () => {
    const keys = assignOrderKeys([null, 'a1', null, null, 'a2', null]);
    assert.equal(keys[1], 'a1');
    assert.equal(keys[4], 'a2');
    const sorted = [...keys].sort();
    assert.deepEqual(keys, sorted);
    assert.equal(new Set(keys).size, keys.length);
  });
});

describe('fact diffing', () => {
  it('finds NEW, UPDATED, REFINED and REMOVED attributes', () => {
    const previous = [
      { id: 'f1', attribute: 'Prime Minister', value: 'Gabriel Attal' },
      { id: 'f2', attribute: 'Capital', value: 'Paris' },
      { id: 'f3', attribute: 'Cyclist', value: 'Tadej Pogacar' },
      { id: 'f4', attribute: 'Motto', value: 'Liberté' },
    ];
    const changes = diffFacts(previous, {
      'prime minister': 'Michel Barnier',
      Capital: '[[Paris]]<ref>atlas</ref>',
      Cyclist: 'Tadej Pogačar',
      Currency: 'Euro',
    });
    assert.deepEqual(
      changes.map((c) => [c.kind, c.kind === 'REMOVED' ? c.previous.id : c.value]),
      [
        ['UPDATED', 'Michel Barnier'],
        ['REFINED', 'Tadej Pogačar'],
        ['NEW', 'Euro'],
        ['REMOVED', 'f4'],
      ],
    );
  });

  it('calls each kind of false change REFINED and keeps real edits UPDATED', () => {
    const cases: Array<[string, string, string]> = [
      ['Arlington, Virgina', 'Arlington, Virginia', 'TYPO'],
      ['Busce', 'Buscè', 'DIACRITICS'],
      ['United States Capitol', 'U.S. Capitol', 'ABBREVIATION'],
      ['UK', 'United Kingdom', 'ABBREVIATION'],
      ['Frankfurt', 'Frankfurt, Germany', 'QUALIFIER'],
      ['Bucharest, Romania', 'Bucharest, Kingdom of Romania', 'QUALIFIER'],
      ['Canada, Mexico, United States', 'Canada, Mexico, U.S.', 'ABBREVIATION'],
    ];
    for (const [before, after, reason] of cases) assert.deepEqual(classifyValueEdit(before, after), { kind: 'REFINED', reason }, `${before} → ${after}`);
    for (const [before, after] of [
      ['Hun Sen', 'Hun Manet'],
      ['5.25%', '5.50%'],
      ['2023', '2024'],
      ['GPT-4', 'GPT-4o'],
      ['Paris, France', 'Lyon, France'],
      ['Paris, France', 'Paris, Texas'],
      ['$1,000', '$1,500'],
      ['Manchester United, 2019', 'Manchester United, 2024'],
      ['Mark Smith', 'Mary Smith'],
      ['John Roberts', 'Jon Roberts'],
    ])
      assert.equal(classifyValueEdit(before!, after!).kind, 'UPDATED', `${before} → ${after}`);
    assert.deepEqual(classifyValueEdit("''Paris''", 'Paris [1]'), { kind: 'SAME' });
    assert.deepEqual(classifyValueEdit('8,336,817', '8,804,190'), { kind: 'UPDATED', added: [], removed: [] }, 'a thousands separator is not a list');
  });

  it('diffs list values as sets of members', () => {
    assert.deepEqual(classifyValueEdit('Canada, Mexico, United States', 'Mexico, United States, Morocco'), {
      kind: 'UPDATED',
      added: ['Morocco'],
      removed: ['Canada'],
    });
    assert.deepEqual(classifyValueEdit('Nepal and China', 'China, Nepal'), { kind: 'REFINED', reason: 'FORMAT' });
    assert.deepEqual(classifyValueEdit('Pat Gelsinger', 'David Zinsner and Michelle Johnston Holthaus'), {
      kind: 'UPDATED',
      added: ['David Zinsner', 'Michelle Johnston Holthaus'],
      removed: ['Pat Gelsinger'],
    });
  });
});

describe('snapshot reader', () => {
  it('keeps an infobox attribute named __proto__ like any other (it was dropped)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'chronoql-'));
    const file = join(directory, 'proto.jsonl');
    await writeFile(file, '{"id": "A", "text": "Fine.", "infobox": {"__proto__": "x", "Capital": "Paris"}}\n');
    const [article] = await readSnapshotFile(file);
    assert.deepEqual(Object.entries(article!.infobox), [
      ['__proto__', 'x'],
      ['Capital', 'Paris'],
    ]);
  });

  it('reports every bad line with file and line number', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'chronoql-'));
    const file = join(directory, 'bad.jsonl');
    await writeFile(
      file,
      [
        JSON.stringify({ id: 'A', text: 'Fine.' }),
        '{not json',
        JSON.stringify({ id: 'B' }),
        '',
        JSON.stringify({ id: 'A', text: 'Again.' }),
        JSON.stringify({ id: 'C', text: 'x', infobox: { Leader: 'X', leader: 'Y' } }),
      ].join('\n'),
    );
    await assert.rejects(readSnapshotFile(file), (error: unknown) => {
      assert.ok(error instanceof InvalidSnapshotError);
      assert.deepEqual(
        error.problems.map((p) => [p.source, p.line]),
        [
          ['bad.jsonl', 2],
          ['bad.jsonl', 3],
          ['bad.jsonl', 5],
          ['bad.jsonl', 6],
        ],
      );
      assert.match(error.message, /bad\.jsonl:2: invalid JSON/);
      assert.match(error.message, /bad\.jsonl:3: "text" must be a string/);
      assert.match(error.message, /appears twice \(first at line 1\)/);
      return true;
    });
  });
});

describe('input limits', () => {
  const sized = (id: string, textBytes: number, entries = 0) => ({
    id,
    title: id,
    text: 'x'.repeat(textBytes),
    infobox: Object.fromEntries(Array.from({ length: entries }, (_, i) => [`a${i}`, 'v'])),
  });

  it('cuts write batches at the article count, the bytes and the infobox entries, keeping order', () => {
    const ids = (batches: Array<Array<{ id: string }>>) => batches.map((batch) => batch.map((article) => article.id).join(' '));
    assert.deepEqual(
      ids([
        ...transactionBatches(
          ['a', 'b', 'c', 'd', 'e'].map((id) => sized(id, 10)),
          2,
        ),
      ]),
      ['a b', 'c d', 'e'],
    );
    const big = MAX_BATCH_BYTES / 2 - 100;
    assert.deepEqual(ids([...transactionBatches([sized('a', big), sized('b', big), sized('c', big)], 100)]), ['a b', 'c']);
    const many = MAX_BATCH_INFOBOX_ENTRIES / 2;
    assert.deepEqual(ids([...transactionBatches([sized('a', 1, many), sized('b', 1, many), sized('c', 1, 1)], 100)]), ['a b', 'c']);
    // An article past a bound on its own still goes, alone (the input checks keep such articles out).
    assert.deepEqual(ids([...transactionBatches([sized('a', 1), sized('b', MAX_BATCH_BYTES + 1), sized('c', 1)], 100)]), ['a', 'b', 'c']);
  });

  it('names the paragraph and the infobox entry that is too long', () => {
    const article = { id: 'a', title: 'a', text: `Short.\n\n${'y'.repeat(MAX_PARAGRAPH_BYTES + 1)}`, infobox: { Motto: 'z'.repeat(20_000) } };
    assert.deepEqual(sizeProblems(article), [
      '"infobox"."Motto" is 20,000 bytes of UTF-8; at most 16,384 are allowed',
      `paragraph 2 of "text" is ${(MAX_PARAGRAPH_BYTES + 1).toLocaleString('en-US')} bytes of UTF-8; at most ${MAX_PARAGRAPH_BYTES.toLocaleString('en-US')} are allowed`,
    ]);
    // Bytes of UTF-8, not characters: 2,041 four-byte characters are 8,164 bytes, past the 2,048 allowed for an id.
    assert.match(sizeProblems({ ...article, id: '😀'.repeat(2041), text: 'Fine.', infobox: {} })[0]!, /"id" is 8,164 bytes/);
  });
});
