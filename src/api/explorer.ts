import { renderGraphiQL } from '@graphql-yoga/render-graphiql';

const EXAMPLE = `# Ask ChronoQL the same question as of two dates: each answer comes with its evidence and how far the certainty gate trusts it.
query AskTwice {
  before: ask(question: "Who is the prime minister of France?", asOf: "2024-08-01") { text guess adopted certainty { reliable } evidence { kind text validFrom validTo } }
  after: ask(question: "Who is the prime minister of France?", asOf: "2024-10-01") { text guess adopted certainty { reliable } evidence { kind text validFrom validTo } }
}

# The fact itself on both dates, its whole history, and the passages that state it.
query PrimeMinisters {
  before: fact(subject: "France", attribute: "Prime Minister", asOf: "2024-08-01") { value validFrom validTo }
  after: fact(subject: "France", attribute: "Prime Minister", asOf: "2024-10-01") { value validFrom validTo }
  history: factHistory(subject: "France", attribute: "Prime Minister") { value change validFrom validTo }
  evidenceBefore: search(query: "Who is the prime minister of France?", asOf: "2024-08-01", k: 2) { score text validFrom validTo }
  evidenceAfter: search(query: "Who is the prime minister of France?", asOf: "2024-10-01", k: 2) { score text validFrom validTo }
}

# Run this in a second tab, with the header {"Authorization": "Bearer KEY"} (the key \`npm run demo\` printed), then ingest a snapshot:
# subscription { changes(afterSeq: 0) { seq kind articleId at sentence { text } fact { attribute value } } }

# Ingesting (with that header) answers at once, INGESTING; ask for the snapshot until it is COMPLETE and searchable, or FAILED:
# mutation { ingestSnapshot(takenAt: "2025-06-01", articles: [{ id: "Explorer note", text: "This article was added from the explorer." }]) { id status } }
# query { snapshot(id: "2025-06-01") { status searchable changeCount failure { code message } } }
`;

let page: string | undefined;

/** GraphiQL with every asset inlined (from @graphql-yoga/render-graphiql): it works with no internet. */
export function explorerPage(): string {
  page ??= renderGraphiQL({
    title: 'ChronoQL explorer',
    endpoint: '/graphql',
    subscriptionsProtocol: 'WS',
    defaultQuery: EXAMPLE,
  });
  return page;
}
