import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  clauseForms,
  controlledEditCases,
  EDIT_KINDS,
  misspell,
  readParagraphs,
  splitOfTitle,
  swapYear,
  type ControlledEditCase,
  type Paragraph,
} from '../../eval/controlledEdits.js';
import { seededRandom } from '../../src/learning/random.js';

/** Levenshtein distance with adjacent transpositions (optimal string alignment). */
function characterEdits(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const numbersOf = (text: string): string[] => text.match(/\d+(?:,\d{3})*/g) ?? [];
const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The sentences of one case that an edit of `kind` made, with the old sentence(s) they came from. */
function edited(c: ControlledEditCase, kind: string): Array<{ old: string[]; new: string }> {
  return c.edits.flatMap((edit, i) => {
    if (edit !== kind) return [];
    const gold = c.gold[i]!;
    const old = gold.previous === null ? [] : [gold.previous, ...(gold.also ?? [])].map((o) => c.old[o]!);
    return [{ old, new: c.new[i]! }];
  });
}

describe('controlled edits of real paragraphs', () => {
  let paragraphs: Paragraph[];
  let tune: ControlledEditCase[];
  let heldOut: ControlledEditCase[];
  before(async () => {
    paragraphs = await readParagraphs(['data/squad/squad-dev-subset.jsonl.gz']);
    tune = controlledEditCases(paragraphs, 'tune', { limit: 150 });
    heldOut = controlledEditCases(paragraphs, 'held-out', { limit: 150 });
  });

  it('is deterministic for a seed, and another seed edits differently', () => {
    assert.deepEqual(controlledEditCases(paragraphs, 'tune', { limit: 150 }), tune);
    const other = controlledEditCases(paragraphs, 'tune', { limit: 150, seed: 7 });
    assert.notDeepEqual(
      other.map((c) => c.new),
      tune.map((c) => c.new),
    );
  });

  it('splits by article: no title in both halves, and every case in the half its title hashes to', () => {
    const tuneTitles = new Set(tune.map((c) => c.title));
    assert.ok(tuneTitles.size > 1 && heldOut.length > 0);
    assert.ok(heldOut.every((c) => !tuneTitles.has(c.title)));
    assert.ok(tune.every((c) => splitOfTitle(c.title) === 'tune') && heldOut.every((c) => splitOfTitle(c.title) === 'held-out'));
  });

  it('makes every edit kind, with one gold label per new sentence and untouched sentences UNCHANGED in place', () => {
    const all = [...tune, ...heldOut];
    for (const kind of EDIT_KINDS)
      assert.ok(
        all.some((c) => c.kinds.includes(kind)),
        kind,
      );
    for (const c of all) {
      assert.equal(c.gold.length, c.new.length);
      assert.ok(c.kinds.length >= 1 && c.kinds.length <= 2, c.id);
      c.edits.forEach((edit, i) => {
        if (edit === null) assert.deepEqual({ label: c.gold[i]!.label, text: c.old[c.gold[i]!.previous!] }, { label: 'UNCHANGED', text: c.new[i] });
      });
    }
  });

  it('each edit does what its kind says', () => {
    const all = [...tune, ...heldOut];
    const gold = (kind: string): string[] => all.flatMap((c) => c.gold.filter((_, i) => c.edits[i] === kind).map((g) => g.label));
    for (const { old, new: fixed } of all.flatMap((c) => edited(c, 'typo'))) assert.equal(characterEdits(old[0]!, fixed), 1, `${old[0]} → ${fixed}`);
    assert.ok(gold('typo').every((label) => label === 'UNCHANGED'));
    for (const kind of ['year', 'number'] as const) {
      for (const { old, new: changed } of all.flatMap((c) => edited(c, kind))) {
        const before = numbersOf(old[0]!);
        const after = numbersOf(changed);
        assert.equal(before.length, after.length);
        assert.equal(before.filter((n, i) => n !== after[i]).length, 1, `${old[0]} → ${changed}`);
        assert.equal(old[0]!.replace(/\d+(?:,\d{3})*/g, '#'), changed.replace(/\d+(?:,\d{3})*/g, '#'));
      }
      assert.ok(gold(kind).every((label) => label === 'CHANGED'));
    }
    for (const { old, new: changed } of all.flatMap((c) => edited(c, 'name'))) assert.notEqual(old[0], changed);
    for (const { old, new: moved } of all.flatMap((c) => edited(c, 'reorder'))) {
      assert.deepEqual(wordsOf(old[0]!).sort(), wordsOf(moved).sort());
      assert.notDeepEqual(wordsOf(old[0]!), wordsOf(moved));
    }
    for (const { old, new: added } of all.flatMap((c) => edited(c, 'parenthetical')))
      assert.ok(added.length > old[0]!.length && wordsOf(added).length > wordsOf(old[0]!).length);
    for (const { old, new: joined } of all.flatMap((c) => edited(c, 'merge'))) assert.deepEqual(wordsOf(joined), wordsOf(old.join(' ')));
    for (const c of all) {
      const split = edited(c, 'split');
      if (split.length > 0)
        assert.deepEqual(
          wordsOf(split.map((s) => s.new).join(' ')).filter((w) => w !== 'and' && w !== 'but'),
          wordsOf(split[0]!.old[0]!).filter((w) => w !== 'and' && w !== 'but'),
        );
      for (const inserted of edited(c, 'insert')) {
        assert.deepEqual(inserted.old, []);
        assert.ok(!c.old.includes(inserted.new));
      }
    }
    assert.ok(gold('insert').every((label) => label === 'NEW'));
  });

  it('edits one sentence with one change', () => {
    const random = seededRandom(3);
    const sentence = 'In 1990, the company opened its first factory in Detroit.';
    const typo = misspell(sentence, random)!;
    assert.equal(characterEdits(typo, sentence), 1);
    const year = swapYear(sentence, random)!;
    assert.notEqual(numbersOf(year)[0], '1990');
    assert.equal(year.replace(/\d+/, '#'), sentence.replace(/\d+/, '#'));
    assert.deepEqual(clauseForms(sentence), { leading: sentence, trailing: 'The company opened its first factory in Detroit in 1990.' });
  });
});
