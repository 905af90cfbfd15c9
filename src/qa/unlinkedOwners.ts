/**
 * A question may ask something of a name no article is about ("Who will be Trump's vice
 * president?" in a store without a Trump page). Linking then finds the attribute elsewhere (the
 * Vice President of Argentina), and its value, however sure the gate is of it, answers another
 * question. Such an answer counts only when the words it was read from name the owner.
 */
import { normalizeAnswer } from '../text/normalize.js';

/** Of the question's names that no article is titled with, those it asks something of: written possessively ("Trump's"). */
export function unlinkedOwners(question: string, unknownNames: readonly string[]): string[] {
  const words = ` ${normalizeAnswer(question)} `;
  return unknownNames.filter((name) => words.includes(` ${name} s `));
}

/** Why an answer read from `evidenceText` does not answer a question about `owners`; null when the text names each of them. */
export function ownerObjection(owners: readonly string[], evidenceText: string): string | null {
  const words = ` ${normalizeAnswer(evidenceText)} `;
  const unnamed = owners.filter((owner) => !words.includes(` ${owner} `));
  return unnamed.length === 0
    ? null
    : `the question asks something of ${unnamed.map((owner) => `"${owner}"`).join(', ')}, which no article is about and the words read do not name`;
}
