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
