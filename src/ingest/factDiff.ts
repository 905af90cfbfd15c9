/** An infobox fact valid in the article's previous snapshot. */
export interface PreviousFact {
  id: string;
  attribute: string;
  value: string;
}

/** DynaQuest's structured changes; the superseded value becomes OUTDATED. */
export type FactChange =
  | { kind: 'NEW'; attribute: string; value: string }
  | { kind: 'UPDATED'; attribute: string; value: string; previous: PreviousFact }
  | { kind: 'REMOVED'; previous: PreviousFact };

/** Attributes are matched case- and spacing-insensitively: "Prime minister" is "Prime Minister". */
export function attributeKey(attribute: string): string {
  return attribute.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * Whether two values state the same fact. Differences of case, spacing, punctuation and
 * diacritics are edits, not changes (DynaQuest's false changes such as "Elisabeth" vs
 * "Élisabeth").
 */
export function sameFactValue(a: string, b: string): boolean {
  return comparableValue(a) === comparableValue(b);
}

function comparableValue(value: string): string {
  return value
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Compares the previous snapshot's facts of one article with its new infobox. */
export function diffFacts(previous: readonly PreviousFact[], infobox: Readonly<Record<string, string>>): FactChange[] {
  const previousByKey = new Map(previous.map((fact) => [attributeKey(fact.attribute), fact]));
  const changes: FactChange[] = [];
  const seen = new Set<string>();
  for (const [attribute, value] of Object.entries(infobox)) {
    const key = attributeKey(attribute);
    seen.add(key);
    const old = previousByKey.get(key);
    if (!old) changes.push({ kind: 'NEW', attribute, value });
    else if (!sameFactValue(old.value, value)) changes.push({ kind: 'UPDATED', attribute, value, previous: old });
  }
  for (const [key, old] of previousByKey) {
    if (!seen.has(key)) changes.push({ kind: 'REMOVED', previous: old });
  }
  return changes;
}
