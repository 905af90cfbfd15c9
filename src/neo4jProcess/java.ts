import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ManagedNeo4jError } from './options.js';

const execFileAsync = promisify(execFile);
const MIN_JAVA_MAJOR = 17;

function javaExecutable(javaHome: string | undefined): string {
  if (javaHome) {
    const candidate = path.join(javaHome, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (existsSync(candidate)) return candidate;
  }
  return 'java';
}

/** The Java to run the launcher with, checked to be new enough. */
export async function findJava(javaHome: string | undefined): Promise<string> {
  const java = javaExecutable(javaHome);
  let versionText: string;
  try {
    // `java -version` reports on stderr.
    versionText = (await execFileAsync(java, ['-version'], { timeout: 30_000, windowsHide: true })).stderr;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ManagedNeo4jError(
        `The managed local Neo4j needs Java ${MIN_JAVA_MAJOR} or newer, but \`${java}\` was not found. ` +
          `Install a JDK ${MIN_JAVA_MAJOR}+ (e.g. \`apt-get install openjdk-17-jdk-headless\`) or set JAVA_HOME, ` +
          'or point ChronoQL at an existing Neo4j 5 server with NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD).',
      );
    }
    throw error;
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionText);
  if (match) {
    // Java 8 and earlier report "1.8.0_x".
    const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
    if (major < MIN_JAVA_MAJOR) {
      throw new ManagedNeo4jError(
        `The managed local Neo4j (Neo4j 5.26) needs Java ${MIN_JAVA_MAJOR} or newer; \`${java}\` is Java ${major}. ` +
          `Install a JDK ${MIN_JAVA_MAJOR}+ and put it first on PATH or in JAVA_HOME, or set NEO4J_URI to use an existing Neo4j.`,
      );
    }
  }
  return java;
}
