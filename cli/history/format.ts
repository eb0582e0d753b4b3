/**
 * Text output of the history verbs: version tables with indented diffs, causation trees,
 * audit tables, cluster diffs, the replay summary and reconcile results. Pure functions
 * of the history API's replies.
 */
import type { Actor, BindingPreemption, BindingRationale, KubeObject } from '../../schemas/index.ts';
import { assertNever } from '../../schemas/assert-never.ts';
import { columnWidths, renderRow, renderTable, toYaml } from '../printers.ts';
import { formatManager } from '../../projections/field-managers.ts';
import type { AuditReply, CauseLink, DiffReply, EventRecord, FieldChange, ReconcileReply, ReplayLine, Version } from './api.ts';
import { formatTime } from './time.ts';

const MAX_VALUE_LENGTH = 160;

const bareString = (value: string): boolean => /^[^\s"'{}[\],#]+$/.test(value) && !/^(true|false|null|-?\d+(\.\d+)?)$/.test(value);

/** A value in a diff line: plain strings bare (quoted when they would read as another type), everything else as compact JSON, long ones cut. */
export const formatValue = (value: unknown): string => {
  const text = typeof value === 'string' && bareString(value) ? value : (JSON.stringify(value) ?? 'undefined');
  return text.length > MAX_VALUE_LENGTH ? `${text.slice(0, MAX_VALUE_LENGTH - 1)}…` : text;
};

const isContainer = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** `+ path: value` for every leaf under `value` (a whole object that appeared or vanished). */
const leaves = (sign: '+' | '-', path: string, value: unknown): string[] => {
  if (isContainer(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, child]) => {
      const childPath = Array.isArray(value) ? `${path}[${key}]` : path === '.' || path === '' ? key : `${path}.${key}`;
      return childPath.endsWith(LAST_APPLIED_PATH) ? [] : leaves(sign, childPath, child);
    });
  }
  return [`${sign} ${path}: ${formatValue(value)}`];
};

/** The annotation kubectl-style apply keeps a copy of the manifest in: the real changes show in the fields themselves. */
const LAST_APPLIED_PATH = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Diff lines: `+ spec.replicas: 3`, `- metadata.labels.x: y`, `~ spec.template.spec
 * .containers[0].image: echo:1 → echo:2`. Added and removed maps and lists (a whole new
 * object, a new `status`) are listed field by field; a whole object vanishing is one line.
 * Changes of the last-applied-configuration annotation are left out (`-o json` has them).
 */
export const formatDiffLines = (diff: readonly FieldChange[]): string[] =>
  diff.flatMap((change): string[] => {
    if (change.path.endsWith(LAST_APPLIED_PATH)) return [];
    switch (change.type) {
      case 'added':
        return leaves('+', change.path, change.value);
      case 'removed':
        return leaves('-', change.path, change.value);
      case 'changed':
        if ((change.from === null || change.from === undefined) && isContainer(change.to)) return leaves('+', change.path, change.to);
        if ((change.to === null || change.to === undefined) && isContainer(change.from)) {
          return change.path === '.' ? ['- (object deleted)'] : [`- ${change.path}: ${formatValue(change.from)}`];
        }
        return [`~ ${change.path}: ${formatValue(change.from)} → ${formatValue(change.to)}`];
      default:
        return assertNever(change, 'field change');
    }
  });

/** `user:admin`, `controller:scheduler`, `node:node-1`. */
export const formatActor = (actor: Actor): string => `${actor.type}:${actor.name}`;

/** `Deployment default/web` or `Node node-1` for a `Kind/namespace/name` key. */
export const formatKey = (key: string): string => {
  const [kind = '', namespace = '', ...rest] = key.split('/');
  const name = rest.join('/');
  return namespace ? `${kind} ${namespace}/${name}` : `${kind} ${name}`;
};

const verdictCell = (verdict: Version['verdict']): string => (verdict.type === 'accepted' ? 'accepted' : `rejected (${verdict.reason})`);

/**
 * The `history` table: one row per event, each followed by its diff (and the rejection
 * message). POSITION is the list resourceVersion just after the event: `get --at` it
 * shows the object at that version.
 */
/** A diff line about `metadata.managedFields` (`+ metadata.managedFields[0].time: …`). */
const MANAGED_FIELDS_LINE = /^[+~-] metadata\.managedFields([[.:]|$)/;

export const formatHistory = (versions: readonly Version[]): string => {
  const header = ['POSITION', 'TIME', 'ACTOR', 'EVENT', 'VERDICT'];
  const rows = versions.map((v) => [v.position, formatTime(v.time), formatActor(v.actor), v.eventType, verdictCell(v.verdict)]);
  const widths = columnWidths([header, ...rows]);
  const lines = [renderRow(header, widths)];
  versions.forEach((version, i) => {
    lines.push(renderRow(rows[i]!, widths));
    if (version.verdict.type === 'rejected') lines.push(`    ! ${version.verdict.message}`);
    else if (version.change === 'DELETED') lines.push('    - (object deleted)');
    else {
      // The managers line says whose write it was; their bookkeeping in the diff would only repeat it.
      if (version.managers.length > 0) lines.push(`    field manager: ${version.managers.map(formatManager).join(', ')}`);
      const diff = formatDiffLines(version.diff).filter((line) => version.managers.length === 0 || !MANAGED_FIELDS_LINE.test(line));
      if (diff.length === 0) lines.push('    (no change)');
      else for (const line of diff) lines.push(`    ${line}`);
    }
  });
  return `${lines.join('\n')}\n`;
};

/** The node a binding chose: the best-scored feasible node. */
export const boundNode = (rationale: BindingRationale | undefined): string | undefined => {
  let best: { node: string; score: number } | undefined;
  for (const score of rationale?.scores ?? []) if (!best || score.score > best.score) best = score;
  return best?.node;
};

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

/** `(score 87, 2 nodes filtered: node-3: Insufficient cpu; node-4: …)` */
export const formatRationale = (rationale: BindingRationale, node: string | undefined = boundNode(rationale)): string => {
  const score = rationale.scores.find((s) => s.node === node)?.score;
  const parts = score !== undefined ? [`score ${score}`] : [];
  if (rationale.filtered.length > 0) {
    parts.push(`${plural(rationale.filtered.length, 'node')} filtered: ${rationale.filtered.map((f) => `${f.node}: ${f.reasons.join(', ')}`).join('; ')}`);
  } else parts.push(`${rationale.feasibleNodes} of ${plural(rationale.totalNodes, 'node')} feasible`);
  return `(${parts.join(', ')})`;
};

/**
 * The preemption a binding followed (schema v9): `preempted 2 pods on node "node-1":
 * default/low-1 (priority 0, uid …), default/low-2 (priority 0, uid …); because 0/2 nodes
 * are available: 2 Insufficient cpu.`
 */
export const formatPreemption = (preemption: BindingPreemption): string => {
  const victims = preemption.victims.map((v) => `${v.namespace}/${v.name} (priority ${v.priority}${v.uid === null ? '' : `, uid ${v.uid}`})`);
  return `preempted ${plural(victims.length, 'pod')} on node "${preemption.nominatedNode}"${victims.length > 0 ? `: ${victims.join(', ')}` : ''}; because ${preemption.reason}`;
};

const actorText = (actor: Actor): string => `${actor.type} "${actor.name}"`;

/** What `why` knows about the object besides its history. */
export interface WhySubject {
  /** The `Kind/namespace/name` key. */
  readonly key: string;
  /** The node the (live) Pod is bound to: names the node of its accepted binding exactly, where scores may tie. */
  readonly nodeName?: string;
}

/**
 * One link of a causation chain in words: `bound to node "node-2" by controller
 * "scheduler" (score 87, …)`, `created by controller "replicaset"`, `Deployment
 * default/web applied by user "admin"`. Events about another object than the subject name it.
 */
export const describeLink = (link: CauseLink, subject: WhySubject): string => {
  const { event, rationale } = link;
  const subjectKey = subject.key;
  const prefix = event.key === subjectKey ? '' : `${formatKey(event.key)} `;
  const by = actorText(event.actor);
  // The field managers the write recorded: `applied by user "admin" as kubectl (Apply)`.
  const as = link.managers && link.managers.length > 0 ? ` as ${link.managers.map(formatManager).join(', ')}` : '';
  let text: string;
  switch (event.eventType) {
    case 'ObjectCreated':
    case 'CustomObjectCreated':
      text = event.actor.type === 'user' ? `${prefix}applied by ${by}${as}` : `${prefix}created by ${by}${as}`;
      break;
    case 'ObjectUpdated':
    case 'CustomObjectUpdated':
      text = `${prefix}updated by ${by}${as}${link.scheduling ? `: ${link.scheduling}` : ''}`;
      break;
    case 'ObjectDeleted':
    case 'CustomObjectDeleted':
      text = `${prefix}deleted by ${by}`;
      break;
    case 'PodBound': {
      const ownBinding = event.key === subjectKey && event.verdict.type === 'accepted';
      const node = (ownBinding ? subject.nodeName : undefined) ?? boundNode(rationale);
      text = `${prefix}bound${node ? ` to node "${node}"` : ''} by ${by}${rationale ? ` ${formatRationale(rationale, node)}` : ''}`;
      break;
    }
    case 'PodStatusChanged':
    case 'NodeStatusChanged':
      text = `${prefix}status reported by ${by}`;
      break;
    default:
      text = `${prefix}${event.eventType} by ${by}`;
  }
  if (event.verdict.type === 'rejected') text += ` [rejected: ${event.verdict.reason}]`;
  return text;
};

/** Drops chains whose every event also appears in a longer chain. */
export const distinctChains = (chains: readonly (readonly CauseLink[])[]): (readonly CauseLink[])[] => {
  const ids = chains.map((chain) => new Set(chain.map((link) => link.event.id)));
  return chains.filter((chain, i) => {
    if (chain.length === 0) return false;
    return !chains.some((other, j) => {
      if (j === i || other.length < chain.length) return false;
      if (other.length === chain.length && j > i) return false;
      return chain.every((link) => ids[j]!.has(link.event.id));
    });
  });
};

/** `  [time position, decided at position]`: both positions are list resourceVersions, pasteable into `get --at` and `debug reconcile --at`. */
const whereWhen = (event: EventRecord): string => {
  const decided = event.decidedAt ? `, decided at ${event.decidedAt}` : '';
  return `  [${formatTime(event.time)} ${event.position}${decided}]`;
};

/**
 * The `why` tree: the object (with its current state) on the first line, then each
 * distinct causation chain as `←` links, one level deeper per step back in time.
 */
export const formatWhy = (head: string, subject: WhySubject, chains: readonly (readonly CauseLink[])[]): string => {
  const lines = [head];
  const distinct = distinctChains(chains);
  if (distinct.length === 0) lines.push('  (no recorded events)');
  for (const chain of distinct) {
    chain.forEach((link, depth) => {
      const indent = '  '.repeat(depth + 1);
      lines.push(`${indent}← ${describeLink(link, subject)}${whereWhen(link.event)}`);
      const scores = link.rationale?.scores ?? [];
      if (scores.length > 1) {
        const sorted = [...scores].sort((a, b) => b.score - a.score);
        lines.push(`${indent}    scores: ${sorted.map((s) => `${s.node}=${s.score}`).join(', ')}`);
      }
      const preemption = link.rationale?.preemption;
      if (preemption) lines.push(`${indent}    ${formatPreemption(preemption)}`);
    });
  }
  return `${lines.join('\n')}\n`;
};

/** The state `why` shows next to the object's name: a Pod's phase, a Node's readiness, a workload's ready count. */
export const objectState = (object: KubeObject | undefined): string => {
  if (!object) return '(deleted)';
  switch (object.kind) {
    case 'Pod':
      return object.metadata.deletionTimestamp ? 'Terminating' : (object.status?.phase ?? 'Pending');
    case 'Node': {
      const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
      return ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown';
    }
    case 'Deployment':
    case 'ReplicaSet':
      return `${object.status?.readyReplicas ?? 0}/${object.spec.replicas ?? 1} ready`;
    case 'Namespace':
      return object.status?.phase ?? 'Active';
    case 'Service':
      return object.spec.clusterIP ?? '';
    default:
      return '';
  }
};

/** The `audit` table, newest first as the server sends it, each event with its position (as in `history`). */
export const formatAudit = (reply: AuditReply): string =>
  renderTable([
    ['POSITION', 'TIME', 'ACTOR', 'EVENT', 'OBJECT', 'VERDICT'],
    ...reply.events.map((e) => [e.position, formatTime(e.time), formatActor(e.actor), e.eventType, formatKey(e.key).replace(' ', '/'), verdictCell(e.verdict)]),
  ]);

const objectTitle = (object: KubeObject): string =>
  object.metadata.namespace ? `${object.kind} ${object.metadata.namespace}/${object.metadata.name}` : `${object.kind} ${object.metadata.name}`;

/** What `diff` prints: `+` created, `-` deleted, `~` changed objects with their field diffs. */
export const formatClusterDiff = (reply: DiffReply): string => {
  const lines = [`from position ${reply.from} to position ${reply.to}:`];
  for (const object of reply.created) lines.push(`+ ${objectTitle(object)}`);
  for (const object of reply.deleted) lines.push(`- ${objectTitle(object)}`);
  for (const change of reply.changed) {
    lines.push(`~ ${objectTitle(change.after)}`);
    for (const line of formatDiffLines(change.diff)) lines.push(`    ${line}`);
  }
  if (reply.created.length + reply.deleted.length + reply.changed.length === 0) lines.push('  no changes');
  return `${lines.join('\n')}\n`;
};

type ReplayResult = Extract<ReplayLine, { type: 'result' }>;

/** Whether a replay reproduced the live state; `undefined` when the server gave no live hash. */
export const replayMatches = (result: ReplayResult): boolean | undefined =>
  result.liveStateHash === null || result.liveStateHash === undefined ? undefined : result.liveStateHash === result.stateHash;

/** `replayed N events in S s (X events/s); state hash H; live hash H (equal)`. */
export const formatReplayResult = (result: ReplayResult): string => {
  const matches = replayMatches(result);
  const live = matches === undefined ? 'live hash unavailable' : `live hash ${result.liveStateHash} (${matches ? 'equal' : 'DIFFERENT'})`;
  return (
    `replayed ${result.events} events in ${result.seconds.toFixed(2)} s (${Math.round(result.eventsPerSecond)} events/s); ` +
    `state hash ${result.stateHash}; ${live}\n`
  );
};

/** The commands a re-run decision yielded, as YAML, and whether they equal the recorded ones. */
export const formatReconcile = (reply: ReconcileReply): string => {
  const lines = [
    `# controller "${reply.controller}" deciding ${reply.key} at position ${reply.at}`,
    `# commands (${reply.commands.length}):`,
    reply.commands.length > 0 ? toYaml(reply.commands).trimEnd() : '[]',
  ];
  if (reply.identical) lines.push('# identical to what the controller appended then');
  else if (reply.recorded.length === 0) {
    lines.push(`# nothing to compare: the log has no decision of "${reply.controller}" about ${reply.key} made at position ${reply.at}`);
    lines.push('# ("logplane why" shows the position each decision was made at)');
  } else {
    lines.push(`# DIFFERENT from what the controller appended then (${reply.recorded.length}):`);
    lines.push(reply.recorded.length > 0 ? toYaml(reply.recorded).trimEnd() : '[]');
  }
  return `${lines.join('\n')}\n`;
};
