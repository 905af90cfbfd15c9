/**
 * What "valid at an instant" means, in one place. Every version (article, sentence, fact,
 * passage) is valid over the half-open interval [validFrom, validTo): from the snapshot that
 * made it until the snapshot that replaced it, or on (validTo null) while nothing has.
 *
 * Three forms of the one rule live here:
 * - `validAtCypher`, the predicate every Cypher read uses (instants, exact);
 * - `isValidAt`, the same rule in TypeScript, applied to every hit of the native index;
 * - `indexInterval`, `indexStart` and `indexEnd`, the conversion to the native index's int32 time, in whole
 *   minutes since the epoch. The conversion widens each interval to the minutes it touches
 *   (validFrom rounded down, validTo up), so the index never loses a valid unit; a unit whose
 *   boundary shares asOf's minute may pass the index and is then dropped by `isValidAt`.
 */
export interface ValidInterval {
  validFrom: Date;
  validTo: Date | null;
}

export function isValidAt(interval: ValidInterval, asOf: Date): boolean {
  const at = asOf.getTime();
  return interval.validFrom.getTime() <= at && (interval.validTo === null || interval.validTo.getTime() > at);
}

/** The Cypher predicate of `isValidAt` for the node variable `v` and the DateTime parameter `$asOf`. */
export function validAtCypher(v: string): string {
  return `${v}.validFrom <= $asOf AND (${v}.validTo IS NULL OR ${v}.validTo > $asOf)`;
}

const MINUTE_MS = 60_000;
const INDEX_MIN = -2_147_483_648;
/** The native index's "still valid" end (int32 max); every closed interval ends below it. */
const INDEX_OPEN_END = 2_147_483_647;

const clamp = (value: number, min: number, max: number): number => Math.min(Math.max(value, min), max);

/** An instant in index time, rounded down: asOf, or the start of a version. */
export function indexStart(instant: Date): number {
  return clamp(Math.floor(instant.getTime() / MINUTE_MS), INDEX_MIN, INDEX_OPEN_END - 2);
}

/**
 * The end of a version in index time, rounded up. Since validTo > validFrom, the rounded
 * interval is never empty, as the index requires, even where dates beyond the index's range
 * (about years -2100 to 6000) are clamped: starts stop one below the last end.
 */
export function indexEnd(validTo: Date): number {
  return clamp(Math.ceil(validTo.getTime() / MINUTE_MS), INDEX_MIN + 1, INDEX_OPEN_END - 1);
}

/** A version's interval in index time, widened to whole minutes; `validTo` null stays open. */
export function indexInterval(interval: ValidInterval): { validFrom: number; validTo: number | null } {
  return { validFrom: indexStart(interval.validFrom), validTo: interval.validTo && indexEnd(interval.validTo) };
}

/** Sidecar tag of indexes built with this conversion: an index saved in other units is rebuilt. */
export const INDEX_TIME_UNIT = 'minute';
