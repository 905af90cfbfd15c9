/**
 * The Cypher face of the time model (domain/time.ts): the same predicates as `isValidAt` and
 * `isCurrentVersion`, for a node variable, so every read and write states them one way.
 */

/** `isValidAt` for the node variable `v` and the DateTime parameter `$asOf`. */
export function validAtCypher(v: string): string {
  return `${v}.validFrom <= $asOf AND (${v}.validTo IS NULL OR ${v}.validTo > $asOf)`;
}

/** `isCurrentVersion` for the node variable `v`: no later snapshot has replaced it. */
export function currentVersionCypher(v: string): string {
  return `${v}.validTo IS NULL`;
}

/**
 * What the store knew as of `$asOf` for the node variable `v`: every version a snapshot up to
 * asOf said, current or not. A question about a period reads all of it, since a later version
 * may no longer say what an earlier one did about that period.
 */
export function knownAsOfCypher(v: string): string {
  return `${v}.validFrom <= $asOf`;
}

/**
 * Valid time as text Lucene can range over, since the fulltext index cannot compare datetimes:
 * the epoch milliseconds moved past zero by 10^16 (any JavaScript date, also before 1970) and
 * written in 17 digits, so the keys sort as the instants do. Sentences and passages carry a key
 * of their validFrom and one of their validTo (OPEN_VALIDITY_KEY while current) beside their
 * searchText, in the same fulltext index, and a lexical search as of a date asks Lucene only for
 * the versions valid then: in a store that grew after asOf, the rest would crowd them out.
 */
const KEY_OFFSET_MS = 10n ** 16n;
const KEY_DIGITS = 17;
/** The validTo key of a version no snapshot has closed: above every instant's key. */
export const OPEN_VALIDITY_KEY = '9'.repeat(KEY_DIGITS);

export function validityKey(instant: Date): string {
  return (BigInt(instant.getTime()) + KEY_OFFSET_MS).toString().padStart(KEY_DIGITS, '0');
}

/** validityKey for a Cypher DateTime expression. */
export function validityKeyCypher(dateTime: string): string {
  return `right('${'0'.repeat(KEY_DIGITS)}' + toString(${dateTime}.epochMillis + ${KEY_OFFSET_MS}), ${KEY_DIGITS})`;
}

/**
 * A Lucene clause, to AND with a query of the same fulltext index, keeping the versions valid at
 * `asOf` by their keys (boosted 0, so the scores are the words' alone). Both bounds are inclusive:
 * a key drops what a millisecond cannot hold, so Lucene keeps a superset of validAtCypher, which
 * still decides.
 */
export function validAtLucene(asOf: Date): string {
  const key = validityKey(asOf);
  return `validFromKey:[0 TO ${key}]^0 AND validToKey:[${key} TO ${OPEN_VALIDITY_KEY}]^0`;
}

/** The SET items giving a new sentence or passage `unit` its keys, valid from the DateTime expression `at` on. */
export function openUnitKeysCypher(unit: string, at: string): string {
  return `${unit}.validFromKey = ${validityKeyCypher(at)}, ${unit}.validToKey = '${OPEN_VALIDITY_KEY}'`;
}

/** The validTo key of version `v` for the DateTime expression `validTo` (or null, current): facts carry none. */
const validToKeyCypher = (v: string, validTo: string | null): string =>
  `${v}.validToKey = CASE WHEN ${v}:Fact THEN null ELSE ${validTo === null ? `'${OPEN_VALIDITY_KEY}'` : validityKeyCypher(validTo)} END`;

/** The SET items that close version `v` at the DateTime expression `at`. */
export function closeVersionCypher(v: string, at: string): string {
  return `${v}.validTo = ${at}, ${v}.closedAt = datetime(), ${validToKeyCypher(v, at)}`;
}

/** The SET items that make version `v` current again (a rolled-back snapshot had closed it); closedAt is to be removed beside them. */
export function reopenVersionCypher(v: string): string {
  return `${v}.validTo = null, ${validToKeyCypher(v, null)}`;
}
