/** Where a probe or hook reaches its container, and how one attempt ends. */
import type { ContainerPort } from '../../schemas/index.ts';
import type { ProcessUser } from './process-user.ts';

/** Where and how a probe reaches its container. */
export interface ProbeTarget {
  readonly podIP: string;
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly ports: readonly ContainerPort[];
  /** Exec probes run as this user (process-user.ts: its groups, no_new_privs); default the agent's. */
  readonly user?: ProcessUser;
  /**
   * Runs an exec probe's command in the container (the CRI runtime: ExecSync) instead of as a
   * process of the agent with `env` and `cwd`. Never rejects.
   */
  readonly runExec?: (command: readonly string[], timeoutMs: number) => Promise<ProbeOutcome>;
}

/** Result of one probe attempt. */
export type ProbeOutcome = { readonly type: 'success' } | { readonly type: 'failure'; readonly detail: string };

/** Resolves a port given as a number or as the name of a container port. */
export function resolvePort(port: number | string, ports: readonly ContainerPort[]): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return ports.find((p) => p.name === port)?.containerPort;
}

