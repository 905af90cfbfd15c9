import type { PreviousFact } from '../domain/plan.js';
import { classifyValueEdit, type FalseChangeKind } from './valueEdits.js';

/**
 * DynaQuest's structured changes; the superseded value becomes OUTDATED. A REFINED edit is a
 * false change (typo, diacritics, abbreviation, qualifier): a new version of the same fact.
 */
export type FactChange =
  | { kind: 'NEW'; attribute: string; value: string }
  | { kind: 'UPDATED'; attribute: string; value: string; previous: PreviousFact; addedMembers: string[]; removedMembers: string[] }
  | { kind: 'REFINED'; attribute: string; value: string; previous: PreviousFact; reason: FalseChangeKind }
  | { kind: 'REMOVED'; previous: PreviousFact };

/** Attributes are matched case- and spacing-insensitively: "Prime minister" is "Prime Minister". */
export function attributeKey(attribute: string): string {
  return attribute.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
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
    if (!old) {
      changes.push({ kind: 'NEW', attribute, value });
      continue;
    }
    const edit = classifyValueEdit(old.value, value);
    if (edit.kind === 'REFINED') changes.push({ kind: 'REFINED', attribute, value, previous: old, reason: edit.reason });
    else if (edit.kind === 'UPDATED')
      changes.push({ kind: 'UPDATED', attribute, value, previous: old, addedMembers: edit.added, removedMembers: edit.removed });
  }
  for (const [key, old] of previousByKey) {
    if (!seen.has(key)) changes.push({ kind: 'REMOVED', previous: old });
  }
  return changes;
}
