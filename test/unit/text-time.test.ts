// What a question's period reads in a text: the words each stated time governs, and how well it fits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readingsFor } from '../../src/qa/textTime.js';
import { readParagraphEventTimes } from '../../src/text/eventTimes.js';

const HORIZON = new Date('2022-01-01T00:00:00Z');
const period = (from: string, to: string) => ({ from: new Date(`${from}T00:00:00Z`), to: new Date(`${to}T00:00:00Z`) });
const best = (text: string, from: string, to: string) => readingsFor(text, period(from, to), readParagraphEventTimes, HORIZON)[0];

describe('readings of a period in the text', () => {
  it('of two times in a sentence, one that opens its clause governs what follows it; one that closes it, what precedes it', () => {
    const career = 'He managed Alfreton Town from 2005 to 2007, and in 2009 he joined Gateshead.';
    assert.equal(best(career, '2005-01-01', '2008-01-01')?.text, 'He managed Alfreton Town');
    assert.equal(best(career, '2009-01-01', '2010-01-01')?.text, 'he joined Gateshead.');
  });

  it('a sentence that states one time speaks of it throughout', () => {
    const reign = 'The revival began under Catherine the Great, who in 1780 made Vologda the center of Vologda Viceroyalty.';
    assert.equal(
      best(reign, '1780-01-01', '1797-01-01')?.text,
      'The revival began under Catherine the Great, who made Vologda the center of Vologda Viceroyalty.',
    );
  });

  it('a time in brackets speaks of the words before it, and leaves no empty brackets behind', () => {
    const heads = 'The civil service was led by Sir Warren Fisher (1919–1939), then by Sir Horace Wilson (1939–1942).';
    assert.equal(best(heads, '1925-01-01', '1926-01-01')?.text, 'The civil service was led by Sir Warren Fisher');
    const one = 'Sir Warren Fisher (1919–1939) was Permanent Secretary to the Treasury.';
    assert.equal(best(one, '1925-01-01', '1926-01-01')?.text, 'Sir Warren Fisher was Permanent Secretary to the Treasury.');
  });

  it('a sentence that states no time goes on with the last time of its paragraph, fitting less than a stated one', () => {
    const story = 'In 1942 Flowers was set to work on the Tunny cipher. With Frank Morrell he designed the Heath Robinson. In 1944 Colossus ran.';
    const all = readingsFor(story, period('1942-01-01', '1943-01-01'), readParagraphEventTimes, HORIZON);
    const told = all.find((reading) => reading.text.includes('Heath Robinson'));
    assert.equal(told?.time.text, 'In 1942');
    assert.ok(told!.fit < all[0]!.fit, `${told!.fit} < ${all[0]!.fit}`);
    assert.equal(all.length, 2, 'the sentence of 1944 speaks of its own time');
  });

  it('a time open at its start does not speak of a period far before its end, and a birth date speaks of no deed', () => {
    const stay = 'Sarri stayed unbeaten until 24 November 2018, when they lost to Tottenham.';
    assert.equal(best(stay, '1850-01-01', '1851-01-01'), undefined);
    assert.equal(best(stay, '2018-01-01', '2019-01-01')?.time.text, 'until 24 November 2018');
    const born = 'Maurizio Sarri (born 10 January 1959) is a football manager who most recently managed Juventus.';
    assert.equal(best(born, '1959-01-01', '1960-01-01'), undefined);
  });

  it('a list of office holders, each line ending in its dates after a comma, gives the holder of the period', () => {
    const holders = [
      'Heads of the service:',
      '- Leonid Derkach, April 22, 1998 – February 10, 2001',
      '- Volodymyr Radchenko, February 10, 2001 – September 2, 2003',
      '- Ihor Smeshko, September 4, 2003 – February 4, 2005',
    ].join('\n\n');
    const reading = best(holders, '2001-02-01', '2003-10-01');
    assert.equal(reading?.text, '- Volodymyr Radchenko');
    assert.equal(reading?.time.text, 'February 10, 2001 – September 2, 2003');
    assert.ok(reading!.fit > 0.9, `fit ${reading!.fit}`);
  });
});
