/** Administration: API keys, snapshots and the schema. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { createApiKey, parseRole } from '../api/auth.js';
import { printChronoqlSchema } from '../api/schema.js';
import { ApiKeyRepository } from '../graph/apiKeyRepository.js';
import { SnapshotRepository } from '../graph/snapshotRepository.js';
import { projectRoot } from '../platform/paths.js';
import { withRuntime } from './common.js';
import { CLI_LEASE_WAIT_MS } from './storeCommands.js';

export function addAdminCommands(program: Command): void {
  const keys = program.command('keys').description('Manage API keys (stored hashed in Neo4j; send one as Authorization: Bearer KEY).');
  keys
    .command('create')
    .description('Create a key and print it once (it cannot be shown again).')
    .requiredOption('--name <name>', 'who or what the key is for')
    .option('--role <role>', 'reader, writer or admin', 'reader')
    .action(async (options: { name: string; role: string }) => {
      const role = parseRole(options.role);
      if (!role) throw new RangeError(`--role must be reader, writer or admin, got "${options.role}"`);
      const { key, token } = await withRuntime((runtime) => createApiKey(runtime.services.db, options.name.trim(), role));
      process.stderr.write(`created key ${key.id} (${key.role}) for "${key.name}"; store it now, it is not shown again:\n`);
      process.stdout.write(`${token}\n`);
    });
  keys
    .command('revoke')
    .description('Revoke a key by its id (running servers stop accepting it within 5 seconds).')
    .argument('<id>', 'the key id, as `keys list` shows it')
    .action(async (id: string) => {
      const key = await withRuntime((runtime) => new ApiKeyRepository(runtime.services.db).revoke(id));
      if (!key) throw new RangeError(`no API key has the id "${id}"`);
      process.stdout.write(`revoked key ${key.id} (${key.role}, "${key.name}") at ${key.revokedAt!.toISOString()}\n`);
    });
  keys
    .command('list')
    .description('List keys (ids, names, roles, dates; never the secrets).')
    .action(async () => {
      const all = await withRuntime((runtime) => new ApiKeyRepository(runtime.services.db).list());
      for (const key of all) {
        const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
        process.stdout.write(`${key.id}\t${key.role}\t${state}\tcreated ${key.createdAt.toISOString()}\t${key.name}\n`);
      }
      if (all.length === 0) process.stdout.write('no API keys; create one with `chronoql keys create --name NAME --role ROLE`\n');
    });

  const snapshots = program.command('snapshots').description('List stored snapshots, and discard one whose ingest was interrupted.');
  snapshots
    .command('list')
    .description('List snapshots, oldest first: id, status (COMPLETE, or INGESTING while written or after an interruption), articles, change events, source.')
    .action(async () => {
      const all = await withRuntime((runtime) => new SnapshotRepository(runtime.services.db).list());
      for (const s of all) process.stdout.write(`${s.id}\t${s.status}\t${s.articleCount} articles\t${s.changeCount} changes\t${s.source}\n`);
      if (all.length === 0) process.stdout.write('no snapshots; ingest one with `chronoql ingest FILE --taken-at DATE`\n');
    });
  snapshots
    .command('abandon')
    .description(
      'Discard a snapshot whose ingest was interrupted (status INGESTING), so that later snapshots can go in. ' +
        'It undoes everything the snapshot wrote: the article versions and facts it added are deleted, those it closed are valid again, ' +
        'articles it added are deleted and the others get back their title, and its change events are deleted (the change sequence ' +
        'continues from the last event kept, so the feed has no gap). The store is then as if the snapshot had never been ingested; ' +
        'running servers rebuild their vector indexes from Neo4j. A complete snapshot cannot be abandoned. ' +
        'To keep the snapshot instead, re-run its ingest: it resumes where it stopped.',
    )
    .argument('<id>', 'the snapshot id, as `snapshots list` shows it (YYYY-MM-DD, or an ISO date-time)')
    .action(async (id: string) => {
      const outcome = await withRuntime((runtime) => runtime.services.ingest.abandon(id, CLI_LEASE_WAIT_MS));
      process.stdout.write(
        `abandoned snapshot ${outcome.snapshot.id}: undid ${outcome.articles} articles and deleted ${outcome.changeEvents} change events; later snapshots can be ingested\n`,
      );
    });

  program
    .command('schema')
    .description('Print the GraphQL schema (SDL) generated from the code.')
    .option('--write', 'write it to schema/schema.graphql instead')
    .action(async (options: { write?: boolean }) => {
      const sdl = await printChronoqlSchema();
      if (options.write) await writeFile(join(projectRoot(), 'schema', 'schema.graphql'), sdl);
      else process.stdout.write(sdl);
    });
}
