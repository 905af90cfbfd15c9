import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readEventTimes, readParagraphEventTimes, type EventTime } from '../../src/text/eventTimes.js';
import { join } from 'node:path';
import { readEventTimeCases, scoreEventTimes } from '../../eval/eventTimeEvaluation.js';
import { projectRoot } from '../../src/platform/paths.js';
import { checkedEventTimes } from '../support/textFuzz.js';

const day = (date: Date | null): string => (date ? date.toISOString().replace(/T.*$/, '') : '');
const shown = (times: readonly EventTime[]): string[] => times.map((time) => `${time.text} = ${day(time.from)}..${day(time.to)}`);

/** Each case: a sentence and what it states, as "words = from..to" (an empty bound is open). */
const CASES: Array<[string, string[]]> = [
  ['He managed Alfreton Town of the Conference North from 2005 to 2007.', ['from 2005 to 2007 = 2005-01-01..2008-01-01']],
  ['Michel Barnier has been prime minister since 5 September 2024.', ['since 5 September 2024 = 2024-09-05..']],
  ['He played for the club until 2019.', ['until 2019 = ..2020-01-01']],
  ['By 1990 the population had doubled.', ['By 1990 = ..1991-01-01']],
  ['The tower was demolished before 1905 and rebuilt after 1910.', ['before 1905 = ..1905-01-01', 'after 1910 = 1911-01-01..']],
  ['He coached between 1990 and 1995.', ['between 1990 and 1995 = 1990-01-01..1996-01-01']],
  ['Americas Got Talent (2006–2009) and Britains Got Talent (2011).', ['2006–2009 = 2006-01-01..2010-01-01', '2011 = 2011-01-01..2012-01-01']],
  ['He owned the house 1811-1827.', ['1811-1827 = 1811-01-01..1828-01-01']],
  ['He joined the A1 team for the 2006–07 season.', ['2006–07 season = 2006-01-01..2008-01-01']],
  ['Yoncho Arsov (1999–00), fourth term.', ['1999–00 = 1999-01-01..2001-01-01']],
  ['She won the league in the 2006 season.', ['in the 2006 season = 2006-01-01..2007-01-01']],
  ['The genre peaked in the 1990s.', ['in the 1990s = 1990-01-01..2000-01-01']],
  ['It was renovated in the mid-1980s and again in late 2024.', ['in the mid-1980s = 1984-01-01..1987-01-01', 'in late 2024 = 2024-09-01..2025-01-01']],
  ['The town grew in the late 19th century.', ['in the late 19th century = 1867-01-01..1900-01-01']],
  ['Return as a reserve driver (2019–present).', ['2019–present = 2019-01-01..']],
  ['Ragnhild Kalstad (born 12 May 1960) is a politician.', ['12 May 1960 = 1960-05-12..1960-05-13']],
  ['Preston Smith (March 7, 1912 October 18, 2003) was governor.', ['March 7, 1912 October 18, 2003 = 1912-03-07..2003-10-19']],
  ['It aired from January 6, 1975, to June 30, 1989.', ['from January 6, 1975, to June 30, 1989 = 1975-01-06..1989-07-01']],
  ['Paris hosted the Games from 26 July to 11 August 2024.', ['from 26 July to 11 August 2024 = 2024-07-26..2024-08-12']],
  ['He served from June 1957 until 1959.', ['from June 1957 until 1959 = 1957-06-01..1960-01-01']],
  ['He announced from 1989 until his death in 2010.', ['from 1989 until his death in 2010 = 1989-01-01..2011-01-01']],
  ['They have hosted it since its inception in 1983.', ['since its inception in 1983 = 1983-01-01..']],
  ['It was not until 1990 that the curse was publicized.', ['not until 1990 = 1990-01-01..1991-01-01']],
  ['Diplomat Zhang Qian travelled from 139 to 125 BC.', ['from 139 to 125 BC = -000138-01-01..-000123-01-01']],
  [
    'General Dong Zhuo (d. 192 AD) found the emperor; Hemma had a stroke in 874 and died.',
    ['192 AD = 0192-01-01..0193-01-01', 'in 874 = 0874-01-01..0875-01-01'],
  ],
  ['Preliminary results are possible by around 2020.', ['by around 2020 = ..2021-01-01']],
  ['At the end of 2017, the museum presented a catalog.', ['At the end of 2017 = 2017-09-01..2018-01-01']],
  ['A parliamentary election is due in autumn 2023.', ['in autumn 2023 = 2023-09-01..2023-12-01']],
  ['Champions: 1978, 1981', ['1978 = 1978-01-01..1979-01-01', '1981 = 1981-01-01..1982-01-01']],
  ['Hits from 1989 and 1990 were included.', ['from 1989 = 1989-01-01..1990-01-01', '1990 = 1990-01-01..1991-01-01']],
];

/** Years that name something, and numbers that are not years. */
const NO_TIMES = [
  'Who won the 2022 World Cup?',
  'Spain won Euro 2016 and the 2006 Chicago Sky lost 13 games.',
  'It was the lead track of the 2015 Swedish short film Kung Fury.',
  'The final batch of locomotives were numbered 1400–1414 from new.',
  'No. 1850 had its valve gear replaced; the puzzle is worth $2000 and the climb is 1500 metres.',
  'August Strindberg wrote plays; they decided to march on Rome.',
  'Happy Unbirthday 2015.8.29 Akasaka BLITZ',
  'He was the first senator to do so.',
  'The crest has been untouched for a century, and the climb took 3 days.',
  '',
];

describe('event times in text', () => {
  for (const [sentence, expected] of CASES) {
    it(sentence, () => assert.deepEqual(shown(readEventTimes(sentence)), expected));
  }

  it('leaves years that name something, and numbers that are not years', () => {
    for (const sentence of NO_TIMES) assert.deepEqual(shown(readEventTimes(sentence)), [], sentence);
  });

  it('keeps a year with a preposition before it even inside a name', () => {
    assert.deepEqual(shown(readEventTimes('The party made its debut at the 1987 general election.')), ['at the 1987 = 1987-01-01..1988-01-01']);
    assert.deepEqual(shown(readEventTimes('In the 2014 Womens Chess Olympiad, she played on top board.')), ['In the 2014 = 2014-01-01..2015-01-01']);
  });

  it('places relative times and dates without a year from the last time the paragraph stated', () => {
    const paragraph = readParagraphEventTimes([
      'In 1919, Scheer wrote his memoirs; a year later they were published in English.',
      'That same year he retired.',
      'On 28 July he was informed of it, and two years later he died.',
      'The following year, the fleet sailed.',
    ]);
    assert.deepEqual(paragraph.map(shown), [
      ['In 1919 = 1919-01-01..1920-01-01', 'a year later = 1920-01-01..1921-01-01'],
      ['That same year = 1920-01-01..1921-01-01'],
      ['On 28 July = 1920-07-28..1920-07-29', 'two years later = 1922-01-01..1923-01-01'],
      ['The following year = 1923-01-01..1924-01-01'],
    ]);
    assert.deepEqual(readParagraphEventTimes(['Empoli hired Sarri on 25 June 2012.', 'The following season, he guided Empoli to promotion.']).map(shown)[1], [
      'The following season = 2013-01-01..2014-01-01',
    ]);
    assert.deepEqual(
      shown(readEventTimes('In 2007 he was appointed at Verona, but was sacked the following 28 February.'))[1],
      '28 February = 2007-02-28..2007-03-01',
      '"the following" day is one day, not every day after it',
    );
    assert.deepEqual(shown(readEventTimes('It was canceled on September 20 of that year.')), [], 'nothing to place it from');
    assert.deepEqual(readParagraphEventTimes(['The network moved on January 14, 1991.', 'It was canceled on September 20 of that year.']).map(shown)[1], [
      'on September 20 of that year = 1991-09-20..1991-09-21',
    ]);
    assert.deepEqual(shown(readEventTimes('From 30 May to 10 June, he took part in the 2017 European Championship.')), [
      'From 30 May to 10 June = 2017-05-30..2017-06-11',
      'in the 2017 = 2017-01-01..2018-01-01',
    ]);
  });

  it('gives offsets and words that match the sentence, and never an empty interval', () => {
    const sentence = 'From 1998 until 1993 she was at the Endla Theatre, and from 1996 until 2001 at the Vanalinnastuudio.';
    const times = checkedEventTimes(sentence);
    assert.deepEqual(shown(times), ['from 1996 until 2001 = 1996-01-01..2002-01-01'], 'a range that ends before it starts is left out');
  });

  it('finds at least 90 % of the hand-checked intervals, and 90 % of what it finds is right, on the sentences it was not tuned on', async () => {
    const cases = await readEventTimeCases(join(projectRoot(), 'data', 'eval', 'event-times.jsonl'));
    const heldOut = cases.filter((row) => row.split !== 'tune');
    const score = scoreEventTimes(heldOut, 'all');
    assert.ok(heldOut.length >= 150 && score.expected >= 140, `${heldOut.length} sentences, ${score.expected} intervals`);
    assert.ok(score.precision >= 0.9 && score.recall >= 0.9, JSON.stringify({ ...score, failures: score.failures.map((failure) => failure.id) }));
  });

  it('reads any text without throwing: arbitrary Unicode and strings of time words', { timeout: 60_000 }, () => {
    const words = ['from', 'to', 'until', 'since', 'between', 'and', 'in', 'the', 'late', 'mid-', 'early', '1990s', '2006', '–', '-', '07', 'BC', 'AD', '19th'];
    const more = [
      'century',
      'present',
      'May',
      'July',
      '4',
      '31',
      '2024',
      ',',
      '(',
      ')',
      'born',
      'd.',
      'that same year',
      'two years later',
      'of that year',
      '874',
    ];
    const timeWords = fc.array(fc.constantFrom(...words, ...more), { maxLength: 14 }).map((parts) => parts.join(' '));
    const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    const text = fc.oneof(timeWords, fc.string({ unit: anyCodeUnit, maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 120 }));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 3 }), (sentences) => {
        readParagraphEventTimes(sentences);
        for (const sentence of sentences) checkedEventTimes(sentence);
      }),
      { numRuns: 1500, seed: 20261127 },
    );
  });
});
