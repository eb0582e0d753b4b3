/**
 * The chaos checker. It reads the desired topic through its own Kafka client (no
 * apiserver, no projection in between) and judges the workload's acknowledged writes
 * against it, then checks projection directories offline against a fresh replay.
 *
 * - lost: an acknowledged write whose op id is not in the log, or sits elsewhere than its
 *   acknowledged resourceVersion says (D = 1 + offset), or with another uid;
 * - duplicated: an op id in the log more than once (a write applied twice);
 * - real-time order (linearizability of the log's order): within a partition, a write
 *   acknowledged before another one started lies at a lower offset;
 * - every projection holds every acknowledged create it has folded past (Namespaces and
 *   Deployments the workload did not delete later), and its state hash equals a fresh replay
 *   of the log to the same position; no node is over capacity;
 * - no pod bound twice (binding.ts): what it needs is indexed while the desired topic is read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { createProjection, createReplayer, formatVector, type PositionVector } from '../../projections/index.ts';
import { decodeEvent, objectKey, type Node, type Pod } from '../../schemas/index.ts';
import { createBindingIndex, indexDesired, type BindingIndex } from './binding.ts';
import { createGenerationIndex, indexActor, type GenerationIndex } from './generations.ts';
import { COUNTER_ANNOTATION, OP_ANNOTATION, type WriteRecord } from './workload.ts';

export interface LoggedWrite {
  readonly op: string;
  readonly key: string;
  readonly type: string;
  readonly partition: number;
  readonly offset: number;
  readonly uid: string | undefined;
}

export interface LogIndex {
  readonly byOp: ReadonlyMap<string, readonly LoggedWrite[]>;
  readonly end: PositionVector;
  readonly events: number;
  readonly bindings: BindingIndex;
  readonly generations: GenerationIndex;
}

export const openCheckerLog = (brokers: string, cluster: string, partitions: number): Promise<EventLog> =>
  createKafkaLog({ brokers: brokers.split(','), cluster, partitions, logLevel: 'nothing', clientId: 'chaos-checker' });

/** Reads every desired event from offset 0 and indexes the workload's ops. */
export const readLogIndex = async (log: EventLog): Promise<LogIndex> => {
  const end: PositionVector = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
  const byOp = new Map<string, LoggedWrite[]>();
  const bindings = createBindingIndex();
  const generations = createGenerationIndex();
  let events = 0;
  for (let partition = 0; partition < end.desired.length; partition++) {
    for (let from = 0; from < end.desired[partition]!; ) {
      const records = await log.read('desired', partition, from, Math.min(end.desired[partition]!, from + 5_000));
      if (records.length === 0) break;
      for (const record of records) {
        events++;
        indexActor(generations, record);
        const event = decodeEvent(record.value);
        const body = event.body;
        indexDesired(bindings, event, record.offset);
        if (body.type !== 'ObjectCreated' && body.type !== 'ObjectUpdated') continue;
        const op = body.object.metadata.annotations?.[OP_ANNOTATION];
        // The workload's own writes (a controller's later write of the object, or a ReplicaSet
        // created from a Deployment, carries its annotations too).
        if (op === undefined || event.actor.type !== 'user' || (body.object.kind !== 'Namespace' && body.object.kind !== 'Deployment')) continue;
        const entry: LoggedWrite = { op, key: event.key, type: body.type, partition, offset: record.offset, uid: body.object.metadata.uid ?? undefined };
        byOp.set(op, [...(byOp.get(op) ?? []), entry]);
      }
      from = records[records.length - 1]!.offset + 1;
    }
  }
  return { byOp, end, events, bindings, generations };
};

export interface AckedVerdict {
  readonly acked: number;
  readonly lost: readonly string[];
  readonly duplicated: readonly string[];
  readonly orderViolations: readonly string[];
}

/** Judges the acknowledged writes against the log. */
export const judgeAcked = (writes: readonly WriteRecord[], index: LogIndex): AckedVerdict => {
  // Deletes carry no op id in the log; what they leave is judged at the end (deletions.ts).
  const acked = writes.filter((w) => w.outcome === 'acked' && w.kind !== 'delete');
  const lost: string[] = [];
  const duplicated = [...index.byOp.entries()].filter(([, entries]) => entries.length > 1).map(([op, entries]) => `${op} at ${entries.map((e) => `${e.partition}/${e.offset}`).join(', ')}`);
  const placed: { write: WriteRecord; at: LoggedWrite }[] = [];
  for (const write of acked) {
    const entries = index.byOp.get(write.op) ?? [];
    const at = entries[0];
    const desiredOffset = Number(write.resourceVersion?.split('.')[0]);
    if (!at) lost.push(`${write.op} (${write.kind} ${write.name}, rv ${write.resourceVersion}): not in the log`);
    else if (at.offset + 1 !== desiredOffset) lost.push(`${write.op} (${write.kind} ${write.name}): acknowledged rv ${write.resourceVersion}, in the log at ${at.partition}/${at.offset}`);
    else if (write.uid !== undefined && at.uid !== undefined && at.uid !== write.uid) lost.push(`${write.op}: uid ${write.uid} acknowledged, ${at.uid} in the log`);
    else placed.push({ write, at });
  }
  // In offset order per partition, no write may have been acknowledged before an earlier-placed one started.
  const orderViolations: string[] = [];
  const byPartition = new Map<number, { write: WriteRecord; at: LoggedWrite }[]>();
  for (const p of placed) byPartition.set(p.at.partition, [...(byPartition.get(p.at.partition) ?? []), p]);
  for (const [partition, list] of byPartition) {
    list.sort((a, b) => a.at.offset - b.at.offset);
    let latestStart: { write: WriteRecord; at: LoggedWrite } | undefined;
    for (const p of list) {
      if (latestStart && p.write.endedAt! < latestStart.write.startedAt) {
        orderViolations.push(
          `partition ${partition}: ${p.write.op} at ${p.at.offset} was acknowledged before ${latestStart.write.op} (at ${latestStart.at.offset}) started`,
        );
      }
      if (!latestStart || p.write.startedAt > latestStart.write.startedAt) latestStart = p;
    }
  }
  return { acked: acked.length, lost, duplicated, orderViolations };
};

export interface ProjectionVerdict {
  readonly name: string;
  readonly position: string;
  readonly stateHash: string;
  readonly replayHash: string;
  /** Acknowledged creates at a position the projection has folded past that it does not hold. */
  readonly missing: readonly string[];
  /** Acknowledged creates beyond its position (it had not caught up when stopped). */
  readonly notYetFolded: number;
  readonly overcommitted: readonly string[];
  /** Final counter values it holds, by client. */
  readonly counters: ReadonlyMap<number, number>;
  /** Pod uid → the node it holds the pod bound to. */
  readonly podNodes: ReadonlyMap<string, string>;
}

/** The key of the object a create wrote. */
const createdKey = (write: WriteRecord): string => {
  if (write.subject !== 'deployment') return `Namespace//${write.name}`;
  const [namespace, name] = write.name.split('/') as [string, string];
  return objectKey({ kind: 'Deployment', metadata: { namespace, name } });
};

/**
 * Opens a stopped component's projection directory (read from disk, no log), and replays
 * the log into a fresh directory up to the same position.
 */
export const judgeProjection = async (
  name: string,
  dir: string,
  log: EventLog,
  writes: readonly WriteRecord[],
  index: LogIndex,
  scratch: string,
): Promise<ProjectionVerdict> => {
  const projection = createProjection({ dir, partitions: log.layout.partitions });
  try {
    const position = projection.cursor();
    const view = projection.view();
    const missing: string[] = [];
    let notYetFolded = 0;
    for (const write of writes) {
      if (write.outcome !== 'acked' || write.kind !== 'create' || write.transient) continue;
      const at = index.byOp.get(write.op)?.[0];
      if (!at) continue; // reported as lost already
      if (at.offset >= (position.desired[at.partition] ?? 0)) {
        notYetFolded++;
        continue;
      }
      const object = view.get(createdKey(write));
      if (!object || object.metadata.uid !== write.uid) missing.push(`${write.op} ${createdKey(write)}`);
    }
    const counters = new Map<number, number>();
    for (const object of view.list('Namespace')) {
      const match = /^chaos-counter-(\d+)$/.exec(object.metadata.name);
      if (match) counters.set(Number(match[1]), Number(object.metadata.annotations?.[COUNTER_ANNOTATION] ?? NaN));
    }
    const overcommitted: string[] = [];
    const podNodes = new Map<string, string>();
    for (const node of view.list('Node') as Node[]) {
      const capacity = Number(node.status?.allocatable?.['pods'] ?? Infinity);
      const onNode = view.podsOnNode(node.metadata.name);
      for (const pod of onNode) if (pod.metadata.uid) podNodes.set(pod.metadata.uid, node.metadata.name);
      const pods = onNode.filter((p: Pod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      if (pods.length > capacity) overcommitted.push(`${node.metadata.name}: ${pods.length} pods > ${capacity}`);
    }
    const stateHash = projection.stateHash();
    const replayDir = mkdtempSync(join(scratch, `replay-${name.replace(/[^\w.-]/g, '_')}-`));
    const replayer = createReplayer({ log, dir: replayDir });
    let replayHash: string;
    try {
      await replayer.advanceTo(position);
      replayHash = replayer.stateHash();
    } finally {
      await replayer.close();
      rmSync(replayDir, { recursive: true, force: true });
    }
    return { name, position: formatVector(position), stateHash, replayHash, missing, notYetFolded, overcommitted, counters, podNodes };
  } finally {
    await projection.close();
  }
};
