import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { runMaven } from '../platform/maven.js';
import { projectRoot } from '../platform/paths.js';
import { withLockFile } from './lockFile.js';
import { ManagedNeo4jError } from './options.js';

/** The launcher's main class (tools/neo4j). */
export const LAUNCHER_CLASS = 'io.chronoql.neo4j.Launcher';

interface LauncherPaths {
  toolsDir: string;
  targetDir: string;
  classesDir: string;
  libDir: string;
  stampFile: string;
}

function launcherPaths(): LauncherPaths {
  const toolsDir = path.join(projectRoot(), 'tools', 'neo4j');
  const targetDir = path.join(toolsDir, 'target');
  return {
    toolsDir,
    targetDir,
    classesDir: path.join(targetDir, 'classes'),
    libDir: path.join(targetDir, 'lib'),
    stampFile: path.join(targetDir, 'chronoql-build.stamp'),
  };
}

/** Builds the launcher with Maven unless an up-to-date build exists; returns the JVM classpath. */
export async function ensureLauncherBuilt(log: (msg: string) => void): Promise<string> {
  const paths = launcherPaths();
  if (!(await buildIsCurrent(paths))) {
    await fs.mkdir(paths.targetDir, { recursive: true });
    // Different data dirs may start at once; Maven writing one target/ twice corrupts it.
    await withLockFile(path.join(paths.targetDir, 'build.lock'), 15 * 60_000, log, async () => {
      if (await buildIsCurrent(paths)) return;
      await buildLauncher(paths, log);
    });
  }
  // Java expands the `*` itself (it is never seen by a shell here).
  return [paths.classesDir, path.join(paths.libDir, '*')].join(path.delimiter);
}

async function buildIsCurrent(paths: LauncherPaths): Promise<boolean> {
  const stamp = await mtimeMs(paths.stampFile);
  if (stamp === undefined) return false;
  if (!existsSync(path.join(paths.classesDir, ...LAUNCHER_CLASS.split('.')) + '.class')) return false;
  const jars = await fs.readdir(paths.libDir).catch(() => [] as string[]);
  if (!jars.some((name) => name.startsWith('neo4j-bolt-'))) return false;
  const newestSource = await newestMtimeMs([path.join(paths.toolsDir, 'pom.xml'), path.join(paths.toolsDir, 'src')]);
  return newestSource <= stamp;
}

async function buildLauncher(paths: LauncherPaths, log: (msg: string) => void): Promise<void> {
  const firstBuild = !existsSync(paths.libDir);
  const stamp = await mtimeMs(paths.stampFile);
  const pomMtime = (await mtimeMs(path.join(paths.toolsDir, 'pom.xml'))) ?? 0;
  // A changed pom.xml may change the Neo4j version. The new jars then go to a fresh directory
  // that replaces lib/ only once Maven succeeded: old and new versions never mix on the
  // classpath, and a failed or offline build leaves the working launcher in place.
  const freshLib = firstBuild || stamp === undefined || pomMtime > stamp;
  const nextLibDir = `${paths.libDir}-next`;
  log(
    firstBuild
      ? 'Building the managed Neo4j launcher (first run: Maven downloads Neo4j 5.26, about 120 MB)...'
      : 'Rebuilding the managed Neo4j launcher (its sources changed)...',
  );
  const started = Date.now();
  const args = ['-f', path.join(paths.toolsDir, 'pom.xml'), 'package'];
  if (freshLib) {
    await fs.rm(nextLibDir, { recursive: true, force: true });
    args.push(`-Dlauncher.lib.dir=${nextLibDir}`);
  }
  try {
    await runMaven(args, { purpose: 'build the managed local Neo4j once', cwd: paths.toolsDir, timeoutMs: 15 * 60_000 });
  } catch (error) {
    throw new ManagedNeo4jError(
      `Building the managed Neo4j launcher failed: ${(error as Error).message}\n` +
        'A JDK 17+ (not just a JRE) is needed too; or set NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD) to use an existing Neo4j 5 server.',
    );
  }
  if (freshLib) {
    const oldLibDir = `${paths.libDir}-old`;
    await fs.rm(oldLibDir, { recursive: true, force: true });
    if (existsSync(paths.libDir)) await fs.rename(paths.libDir, oldLibDir);
    await fs.rename(nextLibDir, paths.libDir);
    await fs.rm(oldLibDir, { recursive: true, force: true });
  }
  await fs.writeFile(paths.stampFile, `built ${new Date().toISOString()}\n`);
  log(`Built the managed Neo4j launcher in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function mtimeMs(file: string): Promise<number | undefined> {
  try {
    return (await fs.stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function newestMtimeMs(roots: string[]): Promise<number> {
  let newest = 0;
  for (const root of roots) {
    const stat = await fs.stat(root).catch(() => undefined);
    if (!stat) continue;
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) {
      const children = await fs.readdir(root);
      newest = Math.max(newest, await newestMtimeMs(children.map((child) => path.join(root, child))));
    }
  }
  return newest;
}
