/** One problem in the input, located precisely enough for a user to fix it. */
export interface InputProblem {
  /** A file name, or "articles" for a GraphQL payload. */
  source: string;
  /** 1-based line (file) or position (payload). */
  line: number;
  message: string;
}

/** Input rejected as a whole, with every problem found listed (the first ten in the message). */
export class InvalidInputError extends Error {
  constructor(
    heading: string,
    readonly problems: InputProblem[],
  ) {
    const shown = problems.slice(0, 10).map((p) => `  ${p.source}:${p.line}: ${p.message}`);
    const more = problems.length > shown.length ? [`  ... and ${problems.length - shown.length} more`] : [];
    super([`${heading} (${problems.length} problem(s)):`, ...shown, ...more].join('\n'));
    this.name = new.target.name;
  }
}

/** Input that cannot be ingested. Nothing has been written when this is thrown. */
export class InvalidSnapshotError extends InvalidInputError {
  readonly code = 'INVALID_SNAPSHOT';

  constructor(problems: InputProblem[]) {
    super('snapshot rejected, nothing written', problems);
  }
}

/** A snapshot that would rewrite history: older than, or conflicting with, what is stored. */
export class SnapshotOrderError extends Error {
  readonly code = 'SNAPSHOT_OUT_OF_ORDER';

  constructor(message: string) {
    super(message);
    this.name = 'SnapshotOrderError';
  }
}

/** Another process holds the store's ingest lease: ingests run one at a time, in date order. */
export class IngestBusyError extends Error {
  readonly code = 'INGEST_IN_PROGRESS';

  constructor(holder: string, until: Date | null) {
    super(
      `another ingest (${holder}) holds the store's ingest lease${until ? ` until ${until.toISOString()} unless it renews it` : ''}; try again when it finishes (nothing written)`,
    );
    this.name = 'IngestBusyError';
  }
}

/** This process lost the ingest lease mid-ingest (it stalled past the lease): it stops before writing more. */
export class IngestLeaseLostError extends Error {
  readonly code = 'INGEST_IN_PROGRESS';

  constructor(snapshotId: string) {
    super(`the ingest of snapshot ${snapshotId} lost the store's ingest lease to another process; re-run it to resume`);
    this.name = 'IngestLeaseLostError';
  }
}

/** The API key that started an ingest was revoked while it ran: it stops before its next batch, and is then rolled back. */
export class IngestRevokedError extends Error {
  readonly code = 'CREDENTIAL_REVOKED';

  constructor(
    readonly snapshotId: string,
    options: { rolledBack: boolean } = { rolledBack: false },
  ) {
    super(
      `the API key that started the ingest of snapshot ${snapshotId} was revoked; the ingest stopped before its next batch${options.rolledBack ? ' and was rolled back: nothing of it is stored' : ''}`,
    );
    this.name = 'IngestRevokedError';
  }
}

/**
 * A snapshot failed while it was being written (Neo4j refused a write the checks did not
 * foresee) and was rolled back: nothing of it is stored, so a corrected re-run or a later
 * snapshot can go in.
 */
export class IngestRolledBackError extends Error {
  readonly code = 'INGEST_FAILED';

  constructor(snapshotId: string, reason: string, options: { cause: unknown }) {
    super(
      `snapshot ${snapshotId} could not be written (${reason}); it was rolled back and nothing of it is stored: correct the input and run it again, or ingest a later snapshot`,
      options,
    );
    this.name = 'IngestRolledBackError';
  }
}
