/**
 * Micro-measurement of the event codec (not a test): encode and decode rates of a few
 * event shapes, and of a v1-written event read through the resolver.
 *
 *     npx tsx schemas/bench-codec.ts [events-per-run]
 */
import { bodies, envelope, pod } from './fixtures/samples.ts';
import { v1ObjectCreatedPod } from './fixtures/v1-object-created-pod.ts';
import { createEventCodec, loadSchemaRegistry, type EventEnvelope, type Pod } from './index.ts';

const count = Number(process.argv[2] ?? 100_000);
const registry = loadSchemaRegistry();
const codec = createEventCodec({ registry });
const v1 = registry.versions.find((version) => version.name === 'v1');
const v1Codec = createEventCodec({ registry, writer: v1 });

/** A Pod as the replicaset controller creates it from a Deployment's template. */
const typicalPod: Pod = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name: 'web-7d4b9c-x2k8p',
    generateName: 'web-7d4b9c-',
    namespace: 'shop',
    uid: '6c0e9a8e-1a5b-4c9f-8f6e-2b8d7c4a3e10',
    creationTimestamp: '2026-01-05T10:00:00Z',
    labels: { app: 'web', 'pod-template-hash': '7d4b9c' },
    ownerReferences: pod.metadata.ownerReferences ?? [],
  },
  spec: {
    containers: [
      {
        name: 'web',
        image: 'logplane/echo:1',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        resources: { requests: { cpu: '100m', memory: '64Mi' } },
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    schedulerName: 'default-scheduler',
  },
};

const shapes: readonly [label: string, event: EventEnvelope][] = [
  ['typical Pod ObjectCreated', envelope({ type: 'ObjectCreated', object: typicalPod })],
  ['full sample Pod ObjectCreated', envelope({ type: 'ObjectCreated', object: pod })],
  ['PodStatusChanged', envelope(bodies.find((body) => body.type === 'PodStatusChanged') as EventEnvelope['body'])],
  ['NodeHeartbeat', envelope({ type: 'NodeHeartbeat', node: 'node-1', time: 1767607200123 }, 'Node//node-1')],
];

function rate(run: () => void): number {
  for (let i = 0; i < Math.min(count, 20_000); i++) {
    run();
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    run();
  }
  return Math.round(count / (Number(process.hrtime.bigint() - start) / 1e9));
}

const format = (perSecond: number): string => perSecond.toLocaleString('en-US').padStart(10);
console.log(`${count.toLocaleString('en-US')} events per run; events/s`);
console.log(`${'event'.padEnd(32)} ${'bytes'.padStart(6)} ${'encode'.padStart(10)} ${'decode'.padStart(10)}`);
for (const [label, event] of shapes) {
  const buf = codec.encode(event);
  console.log(
    `${label.padEnd(32)} ${String(buf.length).padStart(6)} ${format(rate(() => codec.encode(event)))} ${format(rate(() => codec.decode(buf)))}`,
  );
}
const fromV1 = v1Codec.encode(v1ObjectCreatedPod);
console.log(`${`v1 fixture Pod, resolved to ${registry.current.name}`.padEnd(32)} ${String(fromV1.length).padStart(6)} ${''.padStart(10)} ${format(rate(() => codec.decode(fromV1)))}`);
