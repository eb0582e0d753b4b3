/**
 * Pure renderers of the broker's configuration files.
 */
import { randomBytes } from 'node:crypto';
import { minInsyncReplicasFor, replicationFactorFor } from '../topics.ts';

/** One KRaft controller voter: its node id and CONTROLLER port on 127.0.0.1. */
export interface Voter {
  readonly nodeId: number;
  readonly controllerPort: number;
}

/** Inputs of {@link renderServerProperties}. */
export interface ServerConfig {
  /** PLAINTEXT listener port on 127.0.0.1 (clients). */
  readonly port: number;
  /** CONTROLLER listener port on 127.0.0.1 (KRaft quorum). */
  readonly controllerPort: number;
  /** Kafka's `log.dirs` (topic partitions and the metadata log). */
  readonly logDirs: string;
  /** `group.min.session.timeout.ms`: low so consumer-group failover tests are fast. */
  readonly minSessionTimeoutMs: number;
  /** This node's `node.id`; default 1. */
  readonly nodeId?: number;
  /** Every controller of the cluster, this node included; default this node alone. */
  readonly voters?: readonly Voter[];
  /**
   * How long the active controller waits for a broker's heartbeat before fencing it (and
   * so moving its partitions' leadership and shrinking their ISRs); only written for a
   * cluster of several brokers. Default 6000 (Kafka's own: 9000).
   */
  readonly brokerSessionTimeoutMs?: number;
}

/**
 * `server.properties` of one node of a KRaft cluster on 127.0.0.1, broker and controller
 * in one JVM (combined mode): a single node by default, or node `nodeId` of a quorum of
 * `voters`. Internal topics and topics created without a replication factor get the
 * replication factor and `min.insync.replicas` that logplane's own topics get on a cluster
 * of that size (3 and 2 for 3 brokers, 1 and 1 on a single node); no topic
 * auto-creation, no unclean leader election, one partition by default, and fast
 * consumer-group rebalances.
 */
export function renderServerProperties(c: ServerConfig): string {
  const nodeId = c.nodeId ?? 1;
  const voters = c.voters ?? [{ nodeId, controllerPort: c.controllerPort }];
  const replicas = replicationFactorFor(voters.length);
  const minIsr = minInsyncReplicasFor(replicas);
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': nodeId,
    'controller.quorum.voters': voters.map((v) => `${v.nodeId}@127.0.0.1:${v.controllerPort}`).join(','),
    'listeners': `PLAINTEXT://127.0.0.1:${c.port},CONTROLLER://127.0.0.1:${c.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${c.port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': c.logDirs,
    'auto.create.topics.enable': false,
    'num.partitions': 1,
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    'unclean.leader.election.enable': false,
    'offsets.topic.replication.factor': replicas,
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': 1,
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': minIsr,
    'group.initial.rebalance.delay.ms': 0,
    'group.min.session.timeout.ms': c.minSessionTimeoutMs,
    'delete.topic.enable': true,
    ...(voters.length > 1
      ? {
          'broker.session.timeout.ms': c.brokerSessionTimeoutMs ?? 6_000,
          'broker.heartbeat.interval.ms': Math.max(100, Math.floor((c.brokerSessionTimeoutMs ?? 6_000) / 6)),
        }
      : {}),
  };
  const header = '# Written by log/kafka/broker/launcher.ts on every start; edits are overwritten.\n';
  return header + Object.entries(props).map(([k, v]) => `${k}=${String(v)}`).join('\n') + '\n';
}

/** log4j2 configuration: WARN and above to one file (the broker's own log). */
export function renderLog4j2Properties(logFile: string): string {
  return [
    '# Written by log/kafka/broker/launcher.ts on every start; edits are overwritten.',
    'status = warn',
    'appender.file.type = File',
    'appender.file.name = FILE',
    `appender.file.fileName = ${logFile.replaceAll('\\', '/')}`,
    'appender.file.layout.type = PatternLayout',
    'appender.file.layout.pattern = [%d] %p %m (%c)%n',
    'rootLogger.level = warn',
    'rootLogger.appenderRef.file.ref = FILE',
    '',
  ].join('\n');
}

/** A KRaft cluster id: 16 random bytes in base64url (22 characters). */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}
