/**
 * Pure renderers of the broker's configuration files.
 */
import { randomBytes } from 'node:crypto';

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
}

/**
 * `server.properties` of a single-node KRaft cluster: broker and controller in one JVM,
 * both on 127.0.0.1, replication factor 1 everywhere, no topic auto-creation, one
 * partition by default, and fast consumer-group rebalances.
 */
export function renderServerProperties(c: ServerConfig): string {
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@127.0.0.1:${c.controllerPort}`,
    'listeners': `PLAINTEXT://127.0.0.1:${c.port},CONTROLLER://127.0.0.1:${c.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${c.port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': c.logDirs,
    'auto.create.topics.enable': false,
    'num.partitions': 1,
    'default.replication.factor': 1,
    'min.insync.replicas': 1,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'transaction.state.log.num.partitions': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    'group.initial.rebalance.delay.ms': 0,
    'group.min.session.timeout.ms': c.minSessionTimeoutMs,
    'delete.topic.enable': true,
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
