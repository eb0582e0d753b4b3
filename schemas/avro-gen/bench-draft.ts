/**
 * Micro-measurement (not a test): encoded size and encode/decode time of a Pod event with
 * the newest released schema (through the codec) and with the generated draft (avsc plus
 * `draft-convert.ts`), the raw avsc figures of both, and a released-version event read
 * through the draft's resolver.
 *
 *     npx tsx schemas/avro-gen/bench-draft.ts [events-per-run]
 */
import { createEventCodec } from '../codec.ts';
import { compileToAvro } from '../convert.ts';
import { envelope, pod } from '../fixtures/samples.ts';
import type { EventEnvelope, Pod } from '../generated/types.ts';
import { HEADER_LENGTH, loadSchemaRegistry } from '../registry.ts';
import { compileDraftConverters, loadDraftVersion } from './draft-convert.ts';
import { DRAFT_DIR, GENERATED_VERSION } from './draft.ts';
import { createResolver } from '../resolver.ts';

const count = Number(process.argv[2] ?? 10_000);
const registry = loadSchemaRegistry();
const released = registry.current;
const codec = createEventCodec({ registry });
const draft = loadDraftVersion(DRAFT_DIR, GENERATED_VERSION);
const { toAvro, fromAvro } = compileDraftConverters(draft, draft.version.type);
const releasedToAvro = compileToAvro(released.type) ?? ((value: unknown) => value);
const fromReleased = createResolver(draft.version.type, released.type);

/** The Pod of `schemas/bench-codec.ts`: as the replicaset controller creates it from a Deployment's template. */
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

/** Events per second: the median of 5 timed runs of `count` events, after a warm-up. */
function rate(run: () => void): number {
  for (let i = 0; i < Math.min(count, 10_000); i++) {
    run();
  }
  const rates = Array.from({ length: 5 }, () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      run();
    }
    return count / (Number(process.hrtime.bigint() - start) / 1e9);
  }).sort((a, b) => a - b);
  return Math.round(rates[2] as number);
}

const format = (perSecond: number): string => perSecond.toLocaleString('en-US').padStart(10);
const microseconds = (perSecond: number): string => `${(1e6 / perSecond).toFixed(2)} µs`.padStart(9);

console.log(`median of 5 runs of ${count.toLocaleString('en-US')} events; events/s (µs per event)`);
console.log(`${'event / schema'.padEnd(44)} ${'bytes'.padStart(6)} ${'encode'.padStart(21)} ${'decode'.padStart(21)}`);
const row = (label: string, bytes: number, encode: number | undefined, decode: number): void => {
  const encoded = encode === undefined ? ''.padStart(21) : `${format(encode)} ${microseconds(encode)}`;
  console.log(`${label.padEnd(44)} ${String(bytes).padStart(6)} ${encoded} ${format(decode)} ${microseconds(decode)}`);
};

for (const [label, object] of [['typical Pod', typicalPod], ['full sample Pod', pod]] as const) {
  const event: EventEnvelope = envelope({ type: 'ObjectCreated', object });
  const releasedBuf = codec.encode(event);
  row(`${label}, ${released.name} (codec)`, releasedBuf.length, rate(() => codec.encode(event)), rate(() => codec.decode(releasedBuf)));

  const draftBody = draft.version.type.toBuffer(toAvro(event));
  const draftBuf = Buffer.concat([draft.version.header, draftBody]);
  row(
    `${label}, draft (avsc + draft-convert)`,
    draftBuf.length,
    rate(() => Buffer.concat([draft.version.header, draft.version.type.toBuffer(toAvro(event))])),
    rate(() => fromAvro(draft.version.type.decode(draftBuf, HEADER_LENGTH).value)),
  );

  const releasedValue = releasedToAvro(event);
  const releasedBody = released.type.toBuffer(releasedValue);
  row(`${label}, ${released.name} (avsc only)`, HEADER_LENGTH + releasedBody.length, rate(() => released.type.toBuffer(releasedValue)), rate(() => released.type.fromBuffer(releasedBody)));
  const draftValue = toAvro(event);
  row(`${label}, draft (avsc only)`, draftBuf.length, rate(() => draft.version.type.toBuffer(draftValue)), rate(() => draft.version.type.fromBuffer(draftBody)));

  row(
    `${label}, ${released.name}-written, read with the draft`,
    releasedBuf.length,
    undefined,
    rate(() => fromAvro(draft.version.type.decode(releasedBuf, HEADER_LENGTH, fromReleased).value)),
  );
}
