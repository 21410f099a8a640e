/** The `graphir` command as a user runs it: a child process (Node with tsx), against a server. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestServer } from './test-server.js';

const MAIN = resolve('runtime/cli/main.ts');
/** tsx by its path: the command may run in a folder (a bot project) with no tsx of its own. */
const TSX = fileURLToPath(import.meta.resolve('tsx'));

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Where the command runs (default: the repository). */
  readonly cwd?: string;
  /** Besides PATH and HOME, which are all it gets of the test's environment. */
  readonly env?: Record<string, string>;
  readonly stdin?: string;
}

export function runGraphir(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      ['--import', TSX, MAIN, ...args],
      {
        cwd: options.cwd ?? process.cwd(),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        done({ code: error ? ((error.code as number) ?? 1) : 0, stdout, stderr }),
    );
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  });
}

/** The settings that connect the command to `server` with its project's client. */
export function connectionTo(server: TestServer): Record<string, string> {
  return {
    GRAPHIR_URL: server.url,
    GRAPHIR_CLIENT_ID: server.project.clientId,
    GRAPHIR_CLIENT_SECRET: server.project.clientSecret,
  };
}
