/**
 * The `logplane` command: the one-command cluster (`up`), the distributed components
 * (`apiserver`, `controllers`, `agent`), kubectl-like resource verbs and the history verbs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import pino, { type Logger } from 'pino';
import { parseHostPort, type HostPort } from '../addons/dns/address.ts';
import type { ClusterDnsSettings } from './cluster-dns.ts';
import { parseUpstream } from '../addons/dns/upstream.ts';
import { parseIngressAddress, type IngressAddress } from '../addons/ingress/address.ts';
import { AUTHORIZATION_MODES, parseAuthorizationModes, type AuthorizationMode } from '../apiserver/authorization/mode-names.ts';
import { CONTROLLER_NAMES, type ControllerName } from '../reconcilers/controller-names.ts';
import type { Component } from './components.ts';
import { registerHistoryVerbs } from './history/index.ts';
import { registerResourceVerbs } from './verbs/index.ts';
import { type RuntimeFlags, runtimeSettings, withRuntimeOptions } from './runtime-flags.ts';
import { DURABILITIES, KAFKA_DEFAULT_PARTITIONS, type Durability } from './log-flags.ts';
import type { LogTarget } from './wiring.ts';

const integer = (name: string) => (value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer, got "${value}"`);
  return parsed;
};

/**
 * A duration as kube's flags take it (Go's `time.ParseDuration`: `1m0s`, `30s`, `1.5h`,
 * `500ms`), or a plain number of seconds; in milliseconds.
 */
export const parseDuration = (name: string) => (value: string): number => {
  const units: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)];
  if (text === '' || parts.map((p) => p[0]).join('') !== text) {
    throw new InvalidArgumentError(`${name} must be a duration such as 1m0s, 30s or 500ms, got "${value}"`);
  }
  return Math.round(parts.reduce((ms, [, amount, unit]) => ms + Number(amount) * units[unit!]!, 0));
};

/** `--dns`: `none`, or the listen address (`IP[:port]`, port 0 or left out: a free one). */
const dnsAddress = (value: string): HostPort | 'none' => {
  if (value === 'none') return 'none';
  try {
    return parseHostPort(value, '--dns', { defaultPort: 0, allowAnyPort: true });
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

const DNS_CLUSTER_IP_HELP =
  'do not also serve DNS on port 53 of the kube-dns Service\'s ClusterIP (the nameserver of CRI pods\' resolv.conf; needs root and a ClusterIP this host can bind, as the default loopback service CIDR is)';

/** The cluster DNS settings of `--dns`, `--dns-upstream` and `--[no-]dns-cluster-ip`. */
const dnsSettingsOf = (address: HostPort, flags: { dnsUpstream?: string[]; dnsClusterIp: boolean }): ClusterDnsSettings => ({
  ...address,
  ...(flags.dnsUpstream ? { upstreams: flags.dnsUpstream } : {}),
  onClusterIP: flags.dnsClusterIp,
});

/** `--ingress`: `none`, or `IP[:HTTPPORT[,HTTPSPORT]]` (a port left out or 0: a free one). */
const ingressAddress = (value: string): IngressAddress | 'none' => {
  if (value === 'none') return 'none';
  try {
    return parseIngressAddress(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

/** `--dns-upstream`: comma-separated `IP[:port]` (port 53 when left out). */
const dnsUpstreams = (value: string): string[] => {
  const upstreams = value.split(',').map((u) => u.trim()).filter(Boolean);
  try {
    upstreams.forEach(parseUpstream);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return upstreams;
};

const makeLogger = (level: string): Logger =>
  pino({ level, base: { pid: process.pid } }, pino.destination({ dest: 2, sync: false }));

interface LogFlags {
  serviceCidr?: string;
  kafka?: string;
  cluster: string;
  partitions?: number;
  kafkaSsl?: boolean;
  kafkaSaslMechanism?: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  kafkaUsername?: string;
  kafkaPassword?: string;
  kafkaPasswordFile?: string;
  durability: Durability;
}

/**
 * The SASL password: from `--kafka-password-file` (its first line), else LOGPLANE_KAFKA_PASSWORD,
 * else the deprecated `--kafka-password`, which every user of the machine can read in `ps` and
 * `/proc/PID/cmdline` (it still works, with a warning on stderr).
 */
export const kafkaPassword = (
  flags: Pick<LogFlags, 'kafkaPassword' | 'kafkaPasswordFile'>,
  env: NodeJS.ProcessEnv = process.env,
  warn: (text: string) => void = (text) => process.stderr.write(text),
): string => {
  if (flags.kafkaPassword !== undefined) {
    warn('warning: --kafka-password is visible to every user of this machine (ps, /proc/PID/cmdline); use LOGPLANE_KAFKA_PASSWORD or --kafka-password-file\n');
  }
  if (flags.kafkaPasswordFile !== undefined) {
    if (flags.kafkaPassword !== undefined) throw new InvalidArgumentError('give --kafka-password-file or --kafka-password, not both');
    return readFileSync(flags.kafkaPasswordFile, 'utf8').split(/\r?\n/)[0] ?? '';
  }
  return flags.kafkaPassword ?? env['LOGPLANE_KAFKA_PASSWORD'] ?? '';
};

/** `--durability` (or LOGPLANE_DURABILITY): when an append to the embedded log is acknowledged. */
const durabilityOption = (): Option =>
  new Option('--durability <mode>', 'embedded log: acknowledge an append after the disk flush (flushed) or after the commit (committed)')
    .choices([...DURABILITIES])
    .env('LOGPLANE_DURABILITY')
    .default('flushed');

/** Where the log of a component command is: the embedded one in the data directory, or Kafka. */
export const logTarget = (flags: LogFlags, dataDir: string): LogTarget => {
  if (!flags.kafka) {
    return { type: 'embedded', dir: `${dataDir}/log`, cluster: flags.cluster, partitions: flags.partitions ?? 1, durability: flags.durability };
  }
  const sasl =
    flags.kafkaSaslMechanism && flags.kafkaUsername
      ? { mechanism: flags.kafkaSaslMechanism, username: flags.kafkaUsername, password: kafkaPassword(flags) }
      : undefined;
  return {
    type: 'kafka',
    brokers: flags.kafka.split(',').map((b) => b.trim()).filter(Boolean),
    cluster: flags.cluster,
    ...(flags.partitions !== undefined ? { partitions: flags.partitions } : {}),
    ...(flags.kafkaSsl ? { ssl: true } : {}),
    ...(sasl ? { sasl } : {}),
  };
};

const withLogOptions = (command: Command): Command =>
  command
    .option('--kafka <brokers>', 'Kafka bootstrap servers host:port[,host:port] (default: the embedded log in --data)')
    .option('--cluster <name>', 'cluster name (topic prefix)', 'logplane')
    .option('--partitions <n>', `partitions per topic when the topics are created (default: on Kafka the existing topics' count, else ${KAFKA_DEFAULT_PARTITIONS}; on the embedded log 1)`, integer('--partitions'))
    .option('--kafka-ssl', 'connect to Kafka over TLS')
    .addOption(new Option('--kafka-sasl-mechanism <m>', 'SASL mechanism').choices(['plain', 'scram-sha-256', 'scram-sha-512']))
    .option('--kafka-username <user>', 'SASL user')
    .option('--kafka-password-file <path>', 'file whose first line is the SASL password (or set LOGPLANE_KAFKA_PASSWORD)')
    .option('--kafka-password <password>', 'deprecated: SASL password, visible in ps; use --kafka-password-file or LOGPLANE_KAFKA_PASSWORD')
    .addOption(durabilityOption());

interface LimitFlags {
  requestTimeout: number;
  maxConnections: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
}

/** The apiserver's serving limits, named as kube-apiserver's flags (`--max-connections` is logplane's). */
const withLimitOptions = (command: Command): Command =>
  command
    .option('--request-timeout <duration>', 'how long a client may take to send a whole request, headers and body (watches and log follows then stream on); 0 disables', parseDuration('--request-timeout'), 60_000)
    .option('--max-connections <n>', 'open connections at most; more are closed at once and logged (0: no limit)', integer('--max-connections'), 10_000)
    .option('--max-requests-inflight <n>', 'read-only requests in flight at most, watches and logs excluded; more get 429 (0: no limit)', integer('--max-requests-inflight'), 400)
    .option('--max-mutating-requests-inflight <n>', 'mutating requests in flight at most; more get 429 (0: no limit)', integer('--max-mutating-requests-inflight'), 200);

/** `--authorization-mode`, kube-apiserver's flag: a comma list of `AlwaysAllow`, `AlwaysDeny`, `Node`, `RBAC` (default Node,RBAC). */
const withAuthorizationOption = (command: Command): Command =>
  command.addOption(
    new Option('--authorization-mode <modes>', `authorizers asked in order after the system:masters group, comma-separated: ${AUTHORIZATION_MODES.join(', ')}`)
      .argParser((value: string) => {
        try {
          return parseAuthorizationModes(value);
        } catch (error) {
          throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
        }
      })
      .default(['Node', 'RBAC'] as readonly AuthorizationMode[], 'Node,RBAC'),
  );

/** The audit log, named as kube-apiserver's flags. */
interface AuditFlags {
  auditLog: boolean;
  auditLogPath?: string;
  auditPolicyFile?: string;
  auditLogMaxsize: number;
  auditLogMaxbackup: number;
}

const withAuditOptions = (command: Command): Command =>
  command
    .option('--audit-log-path <path>', 'audit log: every request the policy records, as audit.k8s.io/v1 Events, one JSON line each (default DATA/audit/audit.log)')
    .option('--no-audit-log', 'keep no audit log')
    .option('--audit-policy-file <path>', 'audit.k8s.io/v1 Policy choosing what is recorded (default: every request at Metadata)')
    .option('--audit-log-maxsize <MB>', 'rotate the audit log at this size', integer('--audit-log-maxsize'), 100)
    .option('--audit-log-maxbackup <n>', 'rotated audit log files kept', integer('--audit-log-maxbackup'), 10);

const auditOf = (flags: AuditFlags) =>
  flags.auditLog
    ? {
        ...(flags.auditLogPath !== undefined ? { path: flags.auditLogPath } : {}),
        ...(flags.auditPolicyFile !== undefined ? { policyFile: flags.auditPolicyFile } : {}),
        maxSizeMB: flags.auditLogMaxsize,
        maxBackups: flags.auditLogMaxbackup,
      }
    : (false as const);

const limitsOf = (flags: LimitFlags) => ({
  requestTimeoutMs: flags.requestTimeout,
  maxConnections: flags.maxConnections,
  maxRequestsInflight: flags.maxRequestsInflight,
  maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
});

/** Keeps a component running until SIGINT/SIGTERM, then stops it cleanly. */
const runUntilSignal = async (component: Component, logger: Logger): Promise<void> => {
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping');
      process.stderr.write(`\nstopping ${component.description} ...\n`);
      void component.stop().then(resolve, (error: unknown) => {
        logger.error({ error: String(error) }, 'stop failed');
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
};

/** Where apiservers, controllers and agents started from one directory find the cluster CA unless told otherwise. */
const DEFAULT_PKI_DIR = '.logplane/pki';
const PKI_HELP =
  "the cluster PKI directory shared by the apiserver, the controllers and the agents (cluster CA, which issues every component's client and serving certificates; the apiserver's address in cluster-info.kubeconfig)";

/** A stable, distinct pod CIDR for a node name (distributed agents cannot count each other). */
const podCidrFor = (node: string): string => {
  const digest = createHash('sha256').update(node).digest();
  return `127.${101 + (digest[0]! % 50)}.${digest[1]!}.0/24`;
};

/** Builds the command tree. */
export const buildProgram = (): Command => {
  const program = new Command('logplane')
    .description('A Kubernetes-style control plane whose database is an append-only log')
    .version('0.1.0')
    .option('--log-level <level>', 'structured log level on stderr (trace, debug, info, warn, error)', 'warn');

  withAuditOptions(withAuthorizationOption(withLimitOptions(withRuntimeOptions(program
    .command('up')
    .description('run a whole cluster in this process on the embedded log: apiserver, controllers, node agents, proxy, DNS, Ingress')
    .option('--data <dir>', 'data directory (log, projection, kubeconfig, pod logs)', '.logplane')
    .option('--nodes <n>', 'node agents to run', integer('--nodes'), 3)
    .option('--port <port>', 'apiserver port', integer('--port'), 6443)
    .option('--host <host>', 'apiserver address', '127.0.0.1')
    .addOption(new Option('--proxy <mode>', 'service forwarding').choices(['userspace', 'nftables', 'none']).default('userspace'))
    .option('--no-tls', 'serve plain HTTP (kubectl then refuses to send the token)')
    .option('--node-grace <seconds>', 'node silence before Ready=Unknown', integer('--node-grace'))
    .option('--toleration <seconds>', 'default toleration of an unreachable node before eviction', integer('--toleration'))
    .option('--event-ttl <duration>', 'how long an Event stays in the current view after it was last seen (default 1h; the log keeps it)', parseDuration('--event-ttl'))
    .option('--heartbeat <ms>', 'node heartbeat period', integer('--heartbeat'))
    .option('--scheduler-config <file>', 'a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1, kube-scheduler\'s --config): profiles by schedulerName, plugins, weights, args, percentageOfNodesToScore')
    .option('--service-cidr <cidr>', 'ClusterIP range of a new cluster, recorded in its log (default 127.96.0.0/16); on an existing cluster it must be the one recorded')
    .option('--pod-cidr <cidr>', 'pod addresses, a /16; node i gets its i-th /24', '127.100.0.0/16')
    .option('--dns <address>', 'cluster DNS (UDP and TCP) on IP[:port]: port 0 or none given picks a free one (printed); 53 needs root; "none": no DNS', dnsAddress, dnsAddress('127.0.0.1:0'))
    .option('--ingress <address>', 'Ingress controller proxy on IP[:HTTPPORT[,HTTPSPORT]]: a port left out or 0 picks a free one (printed); HTTPSPORT "none": no HTTPS; "none": no Ingress controller', ingressAddress, ingressAddress('127.0.0.1:0,0'))
    .option('--dns-upstream <addresses>', 'forward names outside the cluster zones to these servers (comma-separated IP[:port]); default none: such names are REFUSED', dnsUpstreams)
    .option('--no-dns-cluster-ip', DNS_CLUSTER_IP_HELP)
    .addOption(durabilityOption())))))
    .action(async (flags: LimitFlags & RuntimeFlags & AuditFlags & {
      authorizationMode: readonly AuthorizationMode[];
      data: string; nodes: number; port: number; host: string; proxy: 'userspace' | 'nftables' | 'none';
      tls: boolean; nodeGrace?: number; toleration?: number; eventTtl?: number; heartbeat?: number; schedulerConfig?: string; serviceCidr?: string; podCidr: string; durability: Durability;
      dns: HostPort | 'none'; dnsUpstream?: string[]; dnsClusterIp: boolean; ingress: IngressAddress | 'none';
    }) => {
      const logger = makeLogger(program.opts<{ logLevel: string }>().logLevel);
      const { startCluster } = await import('./up.ts');
      const cluster = await startCluster({
        dataDir: flags.data,
        nodes: flags.nodes,
        ...runtimeSettings(flags),
        port: flags.port,
        host: flags.host,
        proxy: flags.proxy,
        tls: flags.tls,
        logger,
        ...(flags.serviceCidr !== undefined ? { serviceCIDR: flags.serviceCidr } : {}),
        podCIDR: flags.podCidr,
        durability: flags.durability,
        limits: limitsOf(flags),
        authorizationModes: flags.authorizationMode,
        audit: auditOf(flags),
        ...(flags.nodeGrace !== undefined ? { nodeGracePeriodMs: flags.nodeGrace * 1000 } : {}),
        ...(flags.toleration !== undefined ? { tolerationSeconds: flags.toleration } : {}),
        ...(flags.eventTtl !== undefined ? { eventTtlMs: flags.eventTtl } : {}),
        ...(flags.heartbeat !== undefined ? { heartbeatMs: flags.heartbeat } : {}),
        ...(flags.schedulerConfig !== undefined ? { schedulerConfigFile: flags.schedulerConfig } : {}),
        ...(flags.dns !== 'none' ? { dns: dnsSettingsOf(flags.dns, flags) } : {}),
        ...(flags.ingress !== 'none' ? { ingress: flags.ingress } : {}),
      });
      const ingress = cluster.ingress?.address;
      const ingressHost = ingress?.host.includes(':') ? `[${ingress.host}]` : ingress?.host;
      const dns = cluster.dns?.address;
      process.stdout.write(
        [
          `logplane is up: apiserver ${cluster.url}, ${flags.nodes} ${flags.runtime} node(s), data in ${flags.data}`,
          '',
          'Use it with kubectl:',
          `  export KUBECONFIG=${cluster.kubeconfig}`,
          '  kubectl get nodes',
          'or with logplane (finds the kubeconfig in ./.logplane or $KUBECONFIG):',
          '  npx logplane get nodes',
          `Admin token: ${cluster.token}`,
          `Dashboard: ${cluster.url}/ui/ (log in with the admin token)`,
          ...(dns ? [`Cluster DNS: ${dns.host}:${dns.port} (UDP and TCP), e.g. dig @${dns.host} -p ${dns.port} kubernetes.default.svc.cluster.local`] : []),
          ...(ingress
            ? [`Ingress: http://${ingressHost}:${ingress.httpPort}${ingress.httpsPort !== undefined ? ` and https://${ingressHost}:${ingress.httpsPort}` : ''} (IngressClass controller logplane.dev/ingress), e.g. curl -H 'Host: a.example' http://${ingressHost}:${ingress.httpPort}/`]
            : []),
          'Press Ctrl-C to stop (pods are stopped; `logplane up` again resumes the same cluster).',
          '',
        ].join('\n'),
      );
      await runUntilSignal({ description: 'the cluster', stop: () => cluster.stop() }, logger);
    });

  withAuditOptions(withAuthorizationOption(withLimitOptions(withLogOptions(
    program
      .command('apiserver')
      .description('run an apiserver (distributed mode); several may run against the same log')
      .option('--data <dir>', 'data directory (projection, tokens, certificate, kubeconfig)', '.logplane')
      .option('--port <port>', 'port', integer('--port'), 6443)
      .option('--host <host>', 'address', '127.0.0.1')
      .option('--no-tls', 'serve plain HTTP')
      .option('--service-cidr <cidr>', 'ClusterIP range of a new cluster, recorded in its log (default 127.96.0.0/16); on an existing cluster it must be the one recorded')
      .option('--pki <dir>', PKI_HELP, DEFAULT_PKI_DIR)
      .option('--advertise-address <host>', 'the host name or IP the controllers and agents reach this apiserver at, published in <pki>/cluster-info.kubeconfig and named by a new serving certificate (default: --host, loopback for 0.0.0.0)'),
  )))).action(async (flags: LogFlags & LimitFlags & AuditFlags & { authorizationMode: readonly AuthorizationMode[]; data: string; port: number; host: string; tls: boolean; pki: string; serviceCidr?: string; advertiseAddress?: string }) => {
    const logger = makeLogger(program.opts<{ logLevel: string }>().logLevel);
    const { runApiserver } = await import('./components.ts');
    const component = await runApiserver({
      target: logTarget(flags, flags.data),
      dataDir: flags.data,
      pkiDir: flags.pki,
      port: flags.port,
      host: flags.host,
      tls: flags.tls,
      logger,
      limits: limitsOf(flags),
      authorizationModes: flags.authorizationMode,
      audit: auditOf(flags),
      ...(flags.serviceCidr !== undefined ? { serviceCIDR: flags.serviceCidr } : {}),
      ...(flags.advertiseAddress !== undefined ? { advertiseAddress: flags.advertiseAddress } : {}),
    });
    process.stdout.write(`${component.description}\n`);
    await runUntilSignal(component, logger);
  });

  withLogOptions(
    program
      .command('controllers')
      .description('run controllers as consumer-group members (distributed mode); start more to scale out')
      .option('--data <dir>', 'data directory (this process projection)', '.logplane')
      .option('--only <names>', `comma-separated subset of ${CONTROLLER_NAMES.join(', ')}`)
      .option('--node-grace <seconds>', 'node silence before Ready=Unknown', integer('--node-grace'))
      .option('--toleration <seconds>', 'default toleration of an unreachable node', integer('--toleration'))
      .option('--event-ttl <duration>', 'how long an Event stays in the current view after it was last seen (default 1h; the log keeps it)', parseDuration('--event-ttl'))
      .option('--scheduler-config <file>', 'a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1, kube-scheduler\'s --config): profiles by schedulerName, plugins, weights, args, percentageOfNodesToScore')
      .option('--root-ca-file <file>', "the CA bundle published as every namespace's kube-root-ca.crt (the apiserver's certificate: <apiserver --data>/apiserver.crt)")
      .option('--pki <dir>', PKI_HELP, DEFAULT_PKI_DIR)
      .option('--kubeconfig <file>', 'call the apiserver (the hpa controller\'s pod metrics, --metrics-address\'s token checks) with this kubeconfig\'s server and credentials instead of as system:kube-controller-manager (<data>/controller-manager.kubeconfig, issued from --pki)')
      .option('--metrics-address <host:port>', 'serve Prometheus /metrics over HTTPS there (kube-controller-manager\'s secure port is 10257), for bearer tokens allowed to get /metrics'),
  ).action(async (flags: LogFlags & { data: string; pki: string; only?: string; nodeGrace?: number; toleration?: number; eventTtl?: number; schedulerConfig?: string; rootCaFile?: string; kubeconfig?: string; metricsAddress?: string }) => {
    const logger = makeLogger(program.opts<{ logLevel: string }>().logLevel);
    const only = flags.only?.split(',').map((n) => n.trim());
    const unknown = only?.filter((n) => !(CONTROLLER_NAMES as readonly string[]).includes(n));
    if (unknown && unknown.length > 0) throw new InvalidArgumentError(`unknown controller(s) ${unknown.join(', ')}; known: ${CONTROLLER_NAMES.join(', ')}`);
    const { runControllers } = await import('./components.ts');
    const component = await runControllers({
      target: logTarget(flags, flags.data),
      dataDir: flags.data,
      pkiDir: flags.pki,
      logger,
      ...(only ? { only: only as ControllerName[] } : {}),
      ...(flags.nodeGrace !== undefined ? { nodeGracePeriodMs: flags.nodeGrace * 1000 } : {}),
      ...(flags.toleration !== undefined ? { tolerationSeconds: flags.toleration } : {}),
      ...(flags.eventTtl !== undefined ? { eventTtlMs: flags.eventTtl } : {}),
      ...(flags.schedulerConfig !== undefined ? { schedulerConfigFile: flags.schedulerConfig } : {}),
      ...(flags.rootCaFile !== undefined ? { rootCAFile: flags.rootCaFile } : {}),
      ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.metricsAddress !== undefined ? { metricsAddress: flags.metricsAddress } : {}),
    });
    process.stdout.write(`${component.description}\n`);
    await runUntilSignal(component, logger);
  });

  withLogOptions(withRuntimeOptions(
    program
      .command('agent')
      .description('run a node agent (distributed mode): the node\'s pods, this machine\'s service proxy and the cluster DNS')
      .requiredOption('--node <name>', 'node name (repeat the command for more nodes)')
      .option('--data <dir>', 'data directory (projection, pod state and logs)', '.logplane')
      .addOption(new Option('--proxy <mode>', 'service forwarding (one per machine)').choices(['userspace', 'nftables', 'none']).default('userspace'))
      .option('--heartbeat <ms>', 'heartbeat period', integer('--heartbeat'))
      .option('--pod-cidr <cidr>', 'this node\'s pod addresses (default: a /24 in 127.101-150/16 derived from the node name)')
      .option('--pki <dir>', PKI_HELP, DEFAULT_PKI_DIR)
      .option('--dns <address>', 'cluster DNS (UDP and TCP) of this agent, answering from its projection, on IP[:port]: port 0 or none given picks a free one (printed); 53 needs root; "none": no DNS', dnsAddress, dnsAddress('127.0.0.1:0'))
      .option('--dns-upstream <addresses>', 'forward names outside the cluster zones to these servers (comma-separated IP[:port]); default none: such names are REFUSED', dnsUpstreams)
      .option('--no-dns-cluster-ip', DNS_CLUSTER_IP_HELP)
      .option('--kubeconfig <file>', 'call the apiserver (pods\' service-account tokens, the token checks of /metrics) with this kubeconfig\'s server and credentials instead of as system:node:<node> (<data>/kubelet-<node>.kubeconfig, issued from --pki)'),
  )).action(async (flags: LogFlags & RuntimeFlags & {
    node: string; data: string; proxy: 'userspace' | 'nftables' | 'none'; heartbeat?: number; podCidr?: string; pki: string;
    dns: HostPort | 'none'; dnsUpstream?: string[]; dnsClusterIp: boolean; kubeconfig?: string;
  }) => {
    const logger = makeLogger(program.opts<{ logLevel: string }>().logLevel);
    const { runAgent } = await import('./components.ts');
    const component = await runAgent({
      target: logTarget(flags, flags.data),
      dataDir: flags.data,
      pkiDir: flags.pki,
      nodes: [flags.node],
      ...runtimeSettings(flags),
      proxy: flags.proxy,
      podCIDR: flags.podCidr ?? podCidrFor(flags.node),
      ...(flags.dns !== 'none' ? { dns: dnsSettingsOf(flags.dns, flags) } : {}),
      logger,
      ...(flags.heartbeat !== undefined ? { heartbeatMs: flags.heartbeat } : {}),
      ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
    });
    process.stdout.write(`${component.description}\n`);
    await runUntilSignal(component, logger);
  });

  registerResourceVerbs(program);
  registerHistoryVerbs(program);
  return program;
};

/** Entry point of `bin/logplane.mjs`. */
export const main = async (argv: readonly string[]): Promise<void> => {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    // Whatever a failed start left open (a log, listeners) must not keep the process alive.
    process.exit(1);
  }
};

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv);
