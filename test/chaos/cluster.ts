/**
 * The chaos cluster: a real 3-broker KRaft cluster from the Apache jars (RF 3,
 * min.insync.replicas 2) in a private directory, and logplane in distributed mode on it,
 * every component its own OS process with its own data directory: 2 apiservers,
 * 3 `controllers`, 3 agents on the sim runtime, all on one cluster name with 3 partitions.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalBroker, type LocalBroker } from '../../log/kafka/broker/launcher.ts';
import { adminCredentials } from '../../cli/wiring.ts';
import { freePort } from '../e2e/process.ts';
import { createComponent, type ChaosComponent } from './component.ts';

export interface ApiserverEndpoint {
  readonly component: ChaosComponent;
  readonly url: string;
  readonly token: string;
}

export interface ChaosCluster {
  readonly kafka: LocalBroker;
  readonly brokers: string;
  readonly clusterName: string;
  readonly partitions: number;
  readonly apiservers: readonly ApiserverEndpoint[];
  readonly controllers: readonly ChaosComponent[];
  readonly agents: readonly ChaosComponent[];
  readonly components: readonly ChaosComponent[];
  /** Stops every component (SIGINT); returns their exit codes by name. The brokers stay up. */
  stopComponents(): Promise<Record<string, number | null>>;
}

export interface ChaosClusterOptions {
  readonly root: string;
  readonly apiservers?: number;
  readonly controllers?: number;
  readonly agents?: number;
  readonly partitions?: number;
  /** Node silence before Ready=Unknown and the default unreachable toleration (seconds). */
  readonly nodeGraceSeconds?: number;
  readonly tolerationSeconds?: number;
  readonly heartbeatMs?: number;
}

export const startChaosCluster = async (options: ChaosClusterOptions): Promise<ChaosCluster> => {
  const { root } = options;
  const partitions = options.partitions ?? 3;
  mkdirSync(root, { recursive: true });
  const kafka = await startLocalBroker({
    brokers: 3,
    dataDir: join(root, 'kafka'),
    stateFile: join(root, 'kafka-state.json'),
    brokerSessionTimeoutMs: 6_000,
    readyTimeoutMs: 240_000,
  });
  const clusterName = `chaos-${randomUUID().slice(0, 8)}`;
  const log = ['--kafka', kafka.brokers, '--cluster', clusterName, '--partitions', String(partitions), '--log-level', 'error'];
  const pki = ['--pki', join(root, 'pki')];
  const grace = String(options.nodeGraceSeconds ?? 2);
  const toleration = String(options.tolerationSeconds ?? 2);
  const heartbeat = String(options.heartbeatMs ?? 500);

  const apiserverSpecs = await Promise.all(
    Array.from({ length: options.apiservers ?? 2 }, async (_, i) => {
      const dataDir = join(root, `apiserver-${i + 1}`);
      const port = await freePort();
      return {
        port,
        component: createComponent({
          name: `apiserver-${i + 1}`,
          kind: 'apiserver',
          dataDir,
          args: ['apiserver', ...log, ...pki, '--data', dataDir, '--port', String(port), '--no-tls'],
          ready: /\(kubeconfig (\S+)\)/,
        }),
      };
    }),
  );
  const controllers = Array.from({ length: options.controllers ?? 3 }, (_, i) => {
    const dataDir = join(root, `controllers-${i + 1}`);
    return createComponent({
      name: `controllers-${i + 1}`,
      kind: 'controllers',
      dataDir,
      args: ['controllers', ...log, '--data', dataDir, '--node-grace', grace, '--toleration', toleration],
      ready: /^controllers scheduler/m,
    });
  });
  const agents = Array.from({ length: options.agents ?? 3 }, (_, i) => {
    const node = `node-${i + 1}`;
    const dataDir = join(root, `agent-${node}`);
    return createComponent({
      name: `agent-${node}`,
      kind: 'agent',
      dataDir,
      args: ['agent', '--node', node, '--runtime', 'sim', '--proxy', 'none', '--heartbeat', heartbeat, ...log, ...pki, '--data', dataDir],
      ready: new RegExp(`^agent for ${node} `, 'm'),
    });
  });
  const components = [...apiserverSpecs.map((s) => s.component), ...controllers, ...agents];
  try {
    // The first apiserver creates the topics (and the cluster's configuration event) alone.
    await apiserverSpecs[0]!.component.start();
    await Promise.all(components.slice(1).map((c) => c.start()));
  } catch (error) {
    for (const c of components) await c.kill();
    await kafka.stop();
    throw error;
  }
  const apiservers = apiserverSpecs.map(({ port, component }) => ({
    component,
    url: `http://127.0.0.1:${port}`,
    token: adminCredentials(component.dataDir).token,
  }));
  return {
    kafka,
    brokers: kafka.brokers,
    clusterName,
    partitions,
    apiservers,
    controllers,
    agents,
    components,
    stopComponents: async () => {
      const codes: Record<string, number | null> = {};
      await Promise.all(
        components.map(async (c) => {
          codes[c.name] = (await c.stop()).code;
        }),
      );
      return codes;
    },
  };
};
