/**
 * The chaos workload: several clients writing through the apiservers at once, each write
 * tagged with a unique op id (annotation `chaos/op`), so the checker can find it in the log.
 * Every write's outcome is recorded: acknowledged (2xx, with the answer's uid and
 * resourceVersion and the times it started and was answered), refused (409: a stale
 * resourceVersion), or unknown (the connection died, a timeout, a 5xx: it may or may not be
 * in the log, so the checker asserts nothing of it).
 *
 * Client i creates Namespaces `chaos-c<i>-<seq>` (no controller acts on a Namespace that is not being
 * deleted, and Namespaces spread over the partitions by object key; Endpoints without a Service
 * are deleted by the endpoints controller, as in kube) and keeps a counter Namespace
 * `chaos-counter-<i>` (annotation `chaos/n`) that it
 * updates with compare-and-set (PUT with the resourceVersion it last saw): a register whose
 * acknowledged values must appear in the log in acknowledgement order. With
 * `lifecycleEvery` k, every k-th turn of a client is instead a step of its Deployment
 * lifecycles (lifecycle.ts): namespaced creates, scale-ups and -downs, rollouts, Deployment
 * deletes and namespace deletions.
 */
import type { ApiserverEndpoint } from './cluster.ts';
import { createLifecycle, type LifecycleLedger } from './lifecycle.ts';

export const NAMESPACE = 'chaos';
export const OP_ANNOTATION = 'chaos/op';
export const COUNTER_ANNOTATION = 'chaos/n';

/** What a write is about: a plain Namespace, a client's counter, a lifecycle's Namespace or Deployment. */
export type WriteSubject = 'namespace' | 'counter' | 'lifecycle-namespace' | 'deployment';

export interface WriteRecord {
  readonly op: string;
  readonly client: number;
  readonly subject: WriteSubject;
  readonly kind: 'create' | 'update' | 'delete';
  /** The Namespace's name, or `namespace/name` of a Deployment. */
  readonly name: string;
  /** The counter value it writes (updates). */
  readonly value?: number;
  readonly apiserver: string;
  readonly startedAt: number;
  /** refused: another 4xx (e.g. a namespace a lagging apiserver does not list yet); nothing appended. */
  outcome?: 'acked' | 'conflict' | 'refused' | 'unknown';
  /** A create whose object the workload deleted later: no projection is expected to hold it. */
  transient?: boolean;
  endedAt?: number;
  uid?: string;
  resourceVersion?: string;
  detail?: string;
}

export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Requests to one apiserver, counting the ones in flight (to kill it mid-write). */
export interface ApiTarget {
  readonly name: string;
  inFlight(): number;
  request(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<ApiAnswer>;
}

export const createApiTarget = (endpoint: ApiserverEndpoint): ApiTarget => {
  let inFlight = 0;
  return {
    name: endpoint.component.name,
    inFlight: () => inFlight,
    request: async (method, path, body, timeoutMs = 30_000) => {
      inFlight++;
      try {
        const response = await fetch(`${endpoint.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${endpoint.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        return { status: response.status, body: parsed };
      } finally {
        inFlight--;
      }
    },
  };
};

interface ObjectMeta {
  readonly metadata?: { readonly uid?: string; readonly resourceVersion?: string; readonly annotations?: Record<string, string> };
}

export interface Workload {
  readonly writes: readonly WriteRecord[];
  acked(): WriteRecord[];
  /** Stops the clients after their current write; each then reads its counter once more through a live apiserver. */
  stop(): Promise<void>;
  /** The counter value each client last saw (after stop: the final one). */
  counters(): ReadonlyMap<number, number>;
  /** What the Deployment lifecycles left: surviving Deployments, deleted Namespaces and Deployments. */
  readonly ledger: LifecycleLedger;
}

const objectPath = (name?: string): string => `/api/v1/namespaces${name ? `/${name}` : ''}`;

export const startWorkload = (options: {
  targets: readonly ApiTarget[];
  clients: number;
  /** Whether an apiserver is worth trying now (a client skips a dead one). */
  usable: (target: ApiTarget) => boolean;
  /** Every k-th turn of a client is a lifecycle step; 0 or absent: none. */
  lifecycleEvery?: number;
}): Workload => {
  const writes: WriteRecord[] = [];
  const ledger: LifecycleLedger = { surviving: [], deletedNamespaces: [], deletedDeployments: [] };
  const lifecycleEvery = options.lifecycleEvery ?? 0;
  const counters = new Map<number, number>();
  let running = true;

  const client = async (id: number): Promise<void> => {
    let turn = id;
    let seq = 0;
    let counterRv: string | undefined;
    let counterValue = 0;
    const nextTarget = (): ApiTarget => {
      for (let i = 0; i < options.targets.length; i++) {
        const target = options.targets[turn++ % options.targets.length]!;
        if (options.usable(target)) return target;
      }
      return options.targets[turn++ % options.targets.length]!;
    };
    const refreshCounter = async (): Promise<boolean> => {
      const target = nextTarget();
      try {
        const answer = await target.request('GET', objectPath(`chaos-counter-${id}`));
        if (answer.status !== 200) return false;
        const object = answer.body as ObjectMeta;
        counterRv = object.metadata?.resourceVersion;
        counterValue = Number(object.metadata?.annotations?.[COUNTER_ANNOTATION] ?? 0);
        counters.set(id, counterValue);
        return true;
      } catch {
        return false;
      }
    };
    const write = async (record: WriteRecord, target: ApiTarget, method: string, path: string, body: unknown, okStatus: number | readonly number[]): Promise<void> => {
      writes.push(record);
      try {
        const answer = await target.request(method, path, body);
        record.endedAt = Date.now();
        if (typeof okStatus === 'number' ? answer.status === okStatus : okStatus.includes(answer.status)) {
          const object = answer.body as ObjectMeta;
          record.outcome = 'acked';
          record.uid = object.metadata?.uid;
          record.resourceVersion = object.metadata?.resourceVersion;
        } else if (answer.status === 409) {
          record.outcome = 'conflict';
        } else if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
          record.outcome = 'refused';
          record.detail = `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
        } else {
          record.outcome = 'unknown';
          record.detail = `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
        }
      } catch (error) {
        record.endedAt = Date.now();
        record.outcome = 'unknown';
        record.detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
    };

    // The counter, created once (retried through any apiserver until acknowledged or there).
    while (running && counterRv === undefined) {
      const target = nextTarget();
      const record: WriteRecord = { op: `${id}-${seq++}`, client: id, subject: 'counter', kind: 'create', name: `chaos-counter-${id}`, value: 0, apiserver: target.name, startedAt: Date.now() };
      await write(record, target, 'POST', objectPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `chaos-counter-${id}`, annotations: { [OP_ANNOTATION]: record.op, [COUNTER_ANNOTATION]: '0' } } }, 201);
      if (record.outcome === 'acked') {
        counterRv = record.resourceVersion;
        counters.set(id, 0);
      } else {
        await refreshCounter();
      }
    }
    const lifecycle = createLifecycle({
      client: id,
      ledger,
      nextOp: () => `${id}-${seq++}`,
      nextTarget,
      send: async (op, subject, kind, name, method, path, body, ok) => {
        const target = nextTarget();
        const record: WriteRecord = { op: op ?? `${id}-${seq++}`, client: id, subject, kind, name, apiserver: target.name, startedAt: Date.now() };
        await write(record, target, method, path, body, ok);
        return record;
      },
    });
    for (let turn = 1; running; turn++) {
      if (lifecycleEvery > 0 && turn % lifecycleEvery === 0) {
        await lifecycle.step();
        continue;
      }
      const target = nextTarget();
      const op = `${id}-${seq++}`;
      if (seq % 2 === 0) {
        const name = `chaos-c${id}-${seq}`;
        const record: WriteRecord = { op, client: id, subject: 'namespace', kind: 'create', name, apiserver: target.name, startedAt: Date.now() };
        await write(record, target, 'POST', objectPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { [OP_ANNOTATION]: op } } }, 201);
      } else {
        const value = counterValue + 1;
        const record: WriteRecord = { op, client: id, subject: 'counter', kind: 'update', name: `chaos-counter-${id}`, value, apiserver: target.name, startedAt: Date.now() };
        const body = {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: `chaos-counter-${id}`, resourceVersion: counterRv, annotations: { [OP_ANNOTATION]: op, [COUNTER_ANNOTATION]: String(value) } },
        };
        await write(record, target, 'PUT', objectPath(`chaos-counter-${id}`), body, 200);
        if (record.outcome === 'acked') {
          counterRv = record.resourceVersion;
          counterValue = value;
          counters.set(id, value);
        } else {
          await refreshCounter();
        }
      }
    }
    await lifecycle.finish();
    // The final value, through whichever apiserver answers.
    for (let attempt = 0; attempt < 50 && !(await refreshCounter()); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  const done = Promise.all(Array.from({ length: options.clients }, (_, id) => client(id)));
  return {
    writes,
    acked: () => writes.filter((w) => w.outcome === 'acked'),
    counters: () => counters,
    ledger,
    stop: async () => {
      running = false;
      await done;
    },
  };
};
