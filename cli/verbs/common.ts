/**
 * What every verb shares: the connection options (`--kubeconfig`, `--server`, `--token`,
 * `--context`), the namespace options, turning them into a client, and running an action
 * so that errors print like kubectl's and exit with code 1.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { createClient, createDiscovery, type Client } from '../client.ts';
import { resolveConnection, type ConnectionFlags } from '../kubeconfig.ts';
import { formatError } from '../printers.ts';
import { Resources } from './kinds.ts';

/** Adds the options that say which server to talk to. */
export const withConnectionOptions = (command: Command): Command =>
  command
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ./.logplane/kubeconfig)')
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('-s, --server <url>', 'API server address, overriding the kubeconfig')
    .option('--token <token>', 'bearer token, overriding the kubeconfig')
    .option('--insecure-skip-tls-verify', 'accept any certificate from an https server');

/** Adds `-n/--namespace`. */
export const withNamespaceOption = (command: Command): Command =>
  command.option('-n, --namespace <namespace>', 'namespace (default: the context\'s, else "default")');

/** A connected command: its client and namespace. */
export interface Session {
  readonly client: Client;
  /** `-n`, else the context's namespace, else `default`. */
  readonly namespace: string;
  /** Whether the user passed `-n`. */
  readonly explicitNamespace: boolean;
  /** The server's resource types, from discovery: asked once per command run. */
  readonly resources: () => Promise<Resources>;
}

/** The verb's own options. */
export const optionsOf = <T>(command: Command): T => command.opts() as T;

/** Resolves the connection and namespace for a command. */
export const connect = (command: Command): Session => {
  // With the program's options too: the program may define the connection options globally.
  const flags = command.optsWithGlobals() as ConnectionFlags & { namespace?: string; insecureSkipTlsVerify?: boolean };
  const resolved = resolveConnection(flags);
  const connection = flags.insecureSkipTlsVerify ? { ...resolved, insecureSkipTlsVerify: true } : resolved;
  const client = createClient(connection);
  const discovery = createDiscovery(client);
  return {
    client,
    resources: async () => new Resources(await discovery.resources()),
    namespace: flags.namespace ?? connection.namespace ?? 'default',
    explicitNamespace: flags.namespace !== undefined,
  };
};

/** An error already printed (e.g. one per failed item); only sets the exit code. */
export class ReportedError extends Error {
  override readonly name = 'ReportedError';
  constructor(readonly count: number) {
    super(`${count} error(s) reported`);
  }
}

/** Prints an error the way kubectl does, to stderr. */
export const printError = (error: unknown): void => {
  process.stderr.write(`${formatError(error)}\n`);
};

/**
 * Wraps a verb's body as a commander action: the body gets the command (read
 * `processedArgs` and {@link optionsOf}); a thrown error is printed and the exit code set to 1.
 */
export const action =
  (body: (command: Command) => Promise<void>) =>
  async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    try {
      await body(command);
    } catch (error) {
      if (!(error instanceof ReportedError)) printError(error);
      process.exitCode = 1;
    }
  };

let stdoutGuarded = false;

/** A reader that went away (`logplane get pods | head -1`) ends the command quietly instead of crashing on EPIPE. */
const guardStdout = (): void => {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
};

/** Writes to stdout; false when the caller should wait for `drain`. */
export const out = (data: string | Uint8Array): boolean => {
  guardStdout();
  return process.stdout.write(data);
};

/** Parses a non-negative integer option. */
export const parseCount =
  (what: string) =>
  (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${what} must be a non-negative integer, got ${JSON.stringify(value)}`);
    return Number(value);
  };

/** Parses kubectl-style booleans (`--watch=false`); a bare flag is true. */
export const parseBool = (value: string | boolean): boolean => {
  if (typeof value === 'boolean') return value;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new InvalidArgumentError(`expected true or false, got ${JSON.stringify(value)}`);
};

/** Sleeps (for polling loops). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
