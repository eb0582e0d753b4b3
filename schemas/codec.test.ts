import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bodies, envelope, objects, pod, podStatus } from './fixtures/samples.ts';
import { v1ObjectCreatedPod } from './fixtures/v1-object-created-pod.ts';
import { v2PodBound } from './fixtures/v2-pod-bound.ts';
import { v3DecidedAt } from './fixtures/v3-decided-at.ts';
import { v4ObjectUpdatedDeployment } from './fixtures/v4-object-updated-deployment.ts';
import { v5ObjectCreatedPod } from './fixtures/v5-object-created-pod.ts';
import { v6ObjectCreatedPod } from './fixtures/v6-object-created-pod.ts';
import { v7ObjectCreatedPod } from './fixtures/v7-object-created-pod.ts';
import { v8PodBound } from './fixtures/v8-pod-bound.ts';
import {
  createEventCodec,
  decodeEvent,
  DecodeError,
  encodeEvent,
  EncodeError,
  type EventEnvelope,
  KINDS,
  loadSchemaRegistry,
  NotSingleObjectEncodingError,
  type Pod,
  SchemaError,
  UnknownFingerprintError,
  validateObjectShape,
} from './index.ts';

const registry = loadSchemaRegistry();
const v1 = registry.versions.find((version) => version.name === 'v1');
const v2 = registry.versions.find((version) => version.name === 'v2');

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

function expectThrown<T extends Error>(fn: () => unknown, type: new (...args: never[]) => T): T {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as T;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

/** A copy of the pod sample with one field replaced, for the error tables. */
function podWith(edit: (copy: Record<string, any>) => void): EventEnvelope {
  const copy = structuredClone(pod) as Record<string, any>;
  edit(copy);
  return envelope({ type: 'ObjectCreated', object: copy as Pod });
}

describe('round trip', () => {
  it.each(bodies.map((body) => [body.type, body] as const))('%s', (_type, body) => {
    const event = envelope(body);
    expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
  });

  it.each(objects.map((object) => [object.kind, object] as const))('ObjectCreated of a %s', (_kind, object) => {
    const event = envelope({ type: 'ObjectCreated', object });
    expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
  });

  it('covers every kind the hand-written versions (v1–v4) stored (every kind, every field: avro-gen/roundtrip.test.ts)', () => {
    expect(objects.map((object) => object.kind)).toEqual(KINDS.slice(0, 7));
  });

  it('leaves absent optional object fields absent (not null, not undefined)', () => {
    const minimal: Pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } };
    const decoded = decodeEvent(encodeEvent(envelope({ type: 'ObjectCreated', object: minimal })));
    expect(decoded.body).toStrictEqual({ type: 'ObjectCreated', object: minimal });
    expect(Object.keys((decoded.body as { object: Pod }).object.metadata)).toEqual(['name']);
  });

  it('keeps null envelope and event fields null, and fills them with null when absent', () => {
    const event = envelope({ type: 'PodStatusChanged', namespace: 'shop', name: 'p', uid: null, status: podStatus });
    const { causationId: _causationId, ...withoutCausation } = event;
    const decoded = decodeEvent(encodeEvent(withoutCausation as EventEnvelope));
    expect(decoded).toStrictEqual({ ...event, causationId: null });
  });

  it('round-trips text outside ASCII', () => {
    const labels = { 'example.com/ünïcode': 'héllo ✓ 🎉', long: `${'ü'.repeat(100)}${'🎉'.repeat(40)}` };
    const event = envelope({ type: 'ObjectCreated', object: { ...pod, metadata: { ...pod.metadata, labels } } });
    expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
  });

  it('neither mutates nor needs to mutate its input', () => {
    const event = deepFreeze(envelope({ type: 'ObjectUpdated', object: structuredClone(pod), expectedResourceVersion: '7', subresource: null }));
    const before = structuredClone(event);
    const decoded = decodeEvent(encodeEvent(event));
    expect(event).toStrictEqual(before);
    expect(decoded).toStrictEqual(before);
  });

  it('decodes a Uint8Array view without copying it first', () => {
    const buf = encodeEvent(envelope(bodies[0] as EventEnvelope['body']));
    const padded = new Uint8Array(buf.length + 8);
    padded.set(buf, 4);
    expect(decodeEvent(padded.subarray(4, 4 + buf.length))).toStrictEqual(decodeEvent(buf));
  });

  it('decodes to plain objects', () => {
    const decoded = decodeEvent(encodeEvent(envelope(bodies[0] as EventEnvelope['body'])));
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(decoded.body)).toBe(Object.prototype);
  });

  it('round-trips decidedAt, and leaves it absent when it was absent', () => {
    const decided = { ...envelope(bodies[0] as EventEnvelope['body']), decidedAt: '42.17' };
    expect(decodeEvent(encodeEvent(decided))).toStrictEqual(decided);
    const undecided = envelope(bodies[0] as EventEnvelope['body']);
    const decoded = decodeEvent(encodeEvent(undecided));
    expect(decoded).toStrictEqual(undecided);
    expect('decidedAt' in decoded).toBe(false);
  });

  it.each(['v1', 'v2', 'v3'])('decodes with the current reader every sample event that %s can write (an ObjectUpdated of a Deployment failed: avsc cached a broken union resolver)', (name) => {
    const writer = registry.versions.find((version) => version.name === name)!;
    const codec = createEventCodec({ registry, writer });
    let decoded = 0;
    for (const body of bodies) {
      let buf: Buffer;
      try {
        buf = codec.encode(envelope(body as EventEnvelope['body']));
      } catch {
        continue; // a body this older version has no schema for (e.g. ClusterConfigured before v4)
      }
      const event = decodeEvent(buf);
      expect(event.body.type).toBe(body.type);
      decoded += 1;
    }
    expect(decoded).toBeGreaterThanOrEqual(6);
  });

  it('decodes the committed v3 fixture (v3-decided-at.bin, with decidedAt) with the current reader', () => {
    const buf = readFileSync(new URL('./fixtures/v3-decided-at.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v3');
    expect(writer).not.toBe(registry.current);
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    expect(decodeEvent(buf)).toStrictEqual(v3DecidedAt);
  });

  it('decodes the committed v4 fixture (v4-object-updated-deployment.bin, the last hand-written version) with the current reader', () => {
    const buf = readFileSync(new URL('./fixtures/v4-object-updated-deployment.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v4');
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    expect(decodeEvent(buf)).toStrictEqual(v4ObjectUpdatedDeployment);
  });

  it('decodes the committed v5 fixture (v5-object-created-pod.bin, the first generated version) with the current reader, without nodeAdmission', () => {
    const buf = readFileSync(new URL('./fixtures/v5-object-created-pod.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v5');
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    const decoded = decodeEvent(buf);
    expect(decoded).toStrictEqual(v5ObjectCreatedPod);
    expect('nodeAdmission' in decoded.body).toBe(false);
  });

  it('round-trips ObjectCreated.nodeAdmission (v6), and leaves a null one absent', () => {
    const deferred = { ...v5ObjectCreatedPod, body: { ...v5ObjectCreatedPod.body, nodeAdmission: 'Deferred' } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(deferred))).toStrictEqual(deferred);
    const withNull = { ...v5ObjectCreatedPod, body: { ...v5ObjectCreatedPod.body, nodeAdmission: null } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(withNull))).toStrictEqual(v5ObjectCreatedPod);
  });

  it('decodes the committed v6 fixture (v6-object-created-pod.bin) with the current reader, with nodeAdmission and without quotaAdmission', () => {
    const buf = readFileSync(new URL('./fixtures/v6-object-created-pod.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v6');
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    const decoded = decodeEvent(buf);
    expect(decoded).toStrictEqual(v6ObjectCreatedPod);
    expect(decoded.body.type === 'ObjectCreated' && decoded.body.nodeAdmission).toBe('Deferred');
    expect('quotaAdmission' in decoded.body).toBe(false);
  });

  it('round-trips ObjectCreated.quotaAdmission and ObjectUpdated.quotaRelease (v7), and leaves null ones absent', () => {
    const judged = { ...v6ObjectCreatedPod, body: { ...v6ObjectCreatedPod.body, quotaAdmission: 'Judged' } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(judged))).toStrictEqual(judged);
    const withNull = { ...v6ObjectCreatedPod, body: { ...v6ObjectCreatedPod.body, quotaAdmission: null } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(withNull))).toStrictEqual(v6ObjectCreatedPod);
    const created = v6ObjectCreatedPod.body as Extract<EventEnvelope['body'], { type: 'ObjectCreated' }>;
    const release = {
      ...v6ObjectCreatedPod,
      body: { type: 'ObjectUpdated', object: created.object, expectedResourceVersion: null, subresource: 'status', quotaRelease: 'Terminated' },
    } as EventEnvelope;
    expect(decodeEvent(encodeEvent(release))).toStrictEqual(release);
  });

  it('decodes the committed v7 fixture (v7-object-created-pod.bin) with the current reader', () => {
    const buf = readFileSync(new URL('./fixtures/v7-object-created-pod.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v7');
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    expect(decodeEvent(buf)).toStrictEqual(v7ObjectCreatedPod);
  });

  it('round-trips the custom-resource events of v8: a schema registration and a custom object created, updated and deleted', () => {
    const base = { ...v7ObjectCreatedPod, key: 'CronTab.stable.example.com/default/nightly' };
    const object = {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'nightly', namespace: 'default', labels: { app: 'backup' } },
      schema: '0123456789abcdef',
      content: Buffer.from([2, 10, 42, 42, 32, 42, 0]),
    };
    const bodies: EventEnvelope['body'][] = [
      { type: 'SchemaRegistered', resource: 'crontabs.stable.example.com', group: 'stable.example.com', version: 'v1', kind: 'CronTab', fingerprint: '0123456789abcdef', schema: '{"type":"record","name":"X","fields":[]}' },
      { type: 'CustomObjectCreated', object },
      { type: 'CustomObjectUpdated', object, expectedResourceVersion: '7', subresource: 'status' },
      { type: 'CustomObjectDeleted', apiVersion: 'stable.example.com/v1', kind: 'CronTab', namespace: 'default', name: 'nightly', expectedResourceVersion: null, uid: 'u-1', propagationPolicy: 'Foreground', gracePeriodSeconds: null },
    ];
    for (const body of bodies) {
      const event = { ...base, body } as EventEnvelope;
      expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
    }
  });

  it('decodes the committed v8 fixture (v8-pod-bound.bin) with the current reader, its rationale without a preemption', () => {
    const buf = readFileSync(new URL('./fixtures/v8-pod-bound.bin', import.meta.url));
    const writer = registry.versions.find((version) => version.name === 'v8');
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    const decoded = decodeEvent(buf);
    expect(decoded).toStrictEqual(v8PodBound);
    expect(decoded.body.type === 'PodBound' && 'preemption' in decoded.body.rationale).toBe(false);
  });

  it('round-trips BindingRationale.preemption (v9): the victims and the reason of a binding that followed a preemption; a null one decodes absent', () => {
    const bound = v8PodBound.body as Extract<EventEnvelope['body'], { type: 'PodBound' }>;
    const preemption = {
      nominatedNode: 'node-1',
      reason: '0/2 nodes are available: 2 Insufficient cpu.',
      victims: [
        { namespace: 'default', name: 'low-1c', uid: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', priority: 0 },
        { namespace: 'batch', name: 'low-1d', uid: null, priority: -5 },
      ],
    };
    const preempting = { ...v8PodBound, body: { ...bound, rationale: { ...bound.rationale, preemption } } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(preempting))).toStrictEqual(preempting);
    const withNull = { ...v8PodBound, body: { ...bound, rationale: { ...bound.rationale, preemption: null } } } as EventEnvelope;
    expect(decodeEvent(encodeEvent(withNull))).toStrictEqual(v8PodBound);
    const writeV8 = createEventCodec({ registry, writer: registry.versions.find((version) => version.name === 'v8') });
    expect(expectThrown(() => writeV8.encode(preempting), EncodeError).path).toBe('body.rationale.preemption');
  });

  it('decodes a null decidedAt as absent (optional fields are never null when decoded)', () => {
    const { decidedAt: _decidedAt, ...expected } = { ...envelope(bodies[0] as EventEnvelope['body']), decidedAt: null };
    const decoded = decodeEvent(encodeEvent({ ...expected, decidedAt: null }));
    expect(decoded).toStrictEqual(expected);
    expect('decidedAt' in decoded).toBe(false);
  });

  it('round-trips fractional scheduler scores', () => {
    const event = envelope({
      type: 'PodBound',
      namespace: 'shop',
      name: 'web-7d4b9c-x2k8p',
      node: 'node-1',
      expectedPodVersion: null,
      rationale: {
        filtered: [],
        scores: [{ node: 'node-1', score: 87.5, plugins: [{ name: 'NodeResourcesFit', score: 43.75 }, { name: 'NodeResourcesBalancedAllocation', score: 43.75 }] }],
        feasibleNodes: 1,
        totalNodes: 1,
      },
    });
    expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
  });

  it('writes the single-object header of the newest version', () => {
    const buf = encodeEvent(envelope(bodies[0] as EventEnvelope['body']));
    expect(buf.subarray(0, 2)).toEqual(Buffer.from([0xc3, 0x01]));
    expect(buf.readBigUInt64LE(2)).toBe(registry.current.fingerprint);
  });
});

describe('older versions', () => {
  it.each([
    ['v1', 'v1-object-created-pod.bin', v1ObjectCreatedPod],
    ['v2', 'v2-pod-bound.bin', v2PodBound],
  ] as const)('decodes the committed %s fixture (%s) with the current reader', (name, file, expected) => {
    const buf = readFileSync(new URL(`./fixtures/${file}`, import.meta.url));
    const writer = registry.versions.find((version) => version.name === name);
    expect(writer).toBeDefined();
    expect(writer).not.toBe(registry.current);
    expect(buf.readBigUInt64LE(2)).toBe(writer?.fingerprint);
    const decoded = decodeEvent(buf);
    expect(decoded).toStrictEqual(expected);
    expect('decidedAt' in decoded).toBe(false);
  });

  it('reads v2 long scores as numbers of the same value', () => {
    const writeV2 = createEventCodec({ registry, writer: v2 });
    const event = envelope({ type: 'PodBound', namespace: 'shop', name: 'p', node: 'node-1', expectedPodVersion: null, rationale: {
      filtered: [],
      scores: [{ node: 'node-1', score: 2 ** 52, plugins: [{ name: 'Big', score: 2 ** 52 }, { name: 'Negative', score: -100 }] }],
      feasibleNodes: 1,
      totalNodes: 1,
    } });
    expect(decodeEvent(writeV2.encode(event))).toStrictEqual(event);
  });

  it('refuses to write with v2 what only v3 can hold: decidedAt, fractional scores', () => {
    const writeV2 = createEventCodec({ registry, writer: v2 });
    const decided = expectThrown(() => writeV2.encode({ ...envelope(bodies[0] as EventEnvelope['body']), decidedAt: '42.17' }), EncodeError);
    expect(decided.path).toBe('decidedAt');
    const bound = v2PodBound.body as Extract<EventEnvelope['body'], { type: 'PodBound' }>;
    const scores = [{ node: 'node-1', score: 87.5, plugins: [] }];
    const fractional = expectThrown(() => writeV2.encode({ ...v2PodBound, body: { ...bound, rationale: { ...bound.rationale, scores } } }), EncodeError);
    expect(fractional.path).toBe('body.rationale.scores[0].score');
  });

  it('reads fields added since v1 as absent', () => {
    const writeV1 = createEventCodec({ registry, writer: v1 });
    const { generateName: _generateName, ...metadata } = pod.metadata;
    const containers = pod.spec.containers.map(({ workingDir: _workingDir, ...container }) => container);
    const event = envelope({ type: 'ObjectCreated', object: { ...pod, metadata, spec: { ...pod.spec, containers } } });
    expect(decodeEvent(writeV1.encode(event))).toStrictEqual(event);
  });

  it('refuses to write a field its version does not have', () => {
    const writeV1 = createEventCodec({ registry, writer: v1 });
    const error = expectThrown(() => writeV1.encode(envelope({ type: 'ObjectCreated', object: pod })), EncodeError);
    expect(error.path).toBe('body.object.metadata.generateName');
  });
});

describe('decode errors', () => {
  const valid = encodeEvent(envelope(bodies[0] as EventEnvelope['body']));

  it('names an unknown fingerprint in hex and says what to do', () => {
    const buf = Buffer.from(valid);
    buf.writeBigUInt64LE(0x0123456789abcdefn, 2);
    const error = expectThrown(() => decodeEvent(buf), UnknownFingerprintError);
    expect(error.fingerprint).toBe('0123456789abcdef');
    expect(error.message).toContain('0123456789abcdef');
    expect(error.message).toMatch(/upgrade/);
    expect(error.retriable).toBe(false);
    expect(error).toBeInstanceOf(SchemaError);
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['too short for a header', Buffer.from([0xc3, 0x01, 0x00])],
    ['wrong marker', Buffer.concat([Buffer.from([0x4f, 0x62]), valid.subarray(2)])],
    ['JSON', Buffer.from('{"type":"ObjectCreated"}')],
  ])('rejects a buffer that is not single-object encoded: %s', (_case, buf) => {
    expectThrown(() => decodeEvent(buf), NotSingleObjectEncodingError);
  });

  it.each([
    ['truncated', valid.subarray(0, valid.length - 5)],
    ['trailing bytes', Buffer.concat([valid, Buffer.from([0])])],
    ['header only', valid.subarray(0, 10)],
  ])('rejects a corrupt body: %s', (_case, buf) => {
    expectThrown(() => decodeEvent(buf), DecodeError);
  });

  it('throws only SchemaErrors (or decodes) whatever bytes follow a known header', () => {
    let seed = 42;
    const random = (below: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    for (let round = 0; round < 2000; round++) {
      const buf = Buffer.from(valid);
      for (let flips = 1 + random(4); flips > 0; flips--) {
        buf[10 + random(buf.length - 10)] = random(256);
      }
      try {
        decodeEvent(buf);
      } catch (err) {
        expect(err).toBeInstanceOf(SchemaError);
      }
    }
  });
});

describe('encode errors name the first bad field', () => {
  it.each([
    [
      'string where an int belongs',
      podWith((p) => (p.spec.containers[0].ports[0].containerPort = '8080')),
      'body.object.spec.containers[0].ports[0].containerPort',
      /expected int, got "8080"/,
    ],
    ['missing required field', podWith((p) => delete p.spec.containers[0].name), 'body.object.spec.containers[0].name', /required/],
    ['unknown field', podWith((p) => (p.spec.securityContext = { runAsUsr: 1 })), 'body.object.spec.securityContext.runAsUsr', /unknown field/],
    ['unknown kind', podWith((p) => (p.kind = 'Widget')), 'body.object.kind', /"Widget"/],
    ['map value', podWith((p) => (p.metadata.labels.tier = 3)), 'body.object.metadata.labels["tier"]', /expected string/],
    ['int-or-string', podWith((p) => (p.spec.containers[0].livenessProbe.httpGet.port = true)), 'body.object.spec.containers[0].livenessProbe.httpGet.port', /long or string/],
    ['id', { ...envelope(bodies[0] as EventEnvelope['body']), id: 'e-1' }, 'id', /UUID/],
    ['time', { ...envelope(bodies[0] as EventEnvelope['body']), time: 1.5 }, 'time', /long/],
    ['unknown envelope field', { ...envelope(bodies[0] as EventEnvelope['body']), traceId: 'x' }, 'traceId', /unknown field/],
    [
      'actor type',
      { ...envelope(bodies[0] as EventEnvelope['body']), actor: { type: 'robot', name: 'r' } },
      'actor.type',
      /one of "user", "node", "controller"/,
    ],
  ])('%s', (_case, event, path, detail) => {
    const error = expectThrown(() => encodeEvent(event as EventEnvelope), EncodeError);
    expect(error.path).toBe(path);
    expect(error.detail).toMatch(detail);
    expect(error.message).toContain(path);
  });
});

describe('validateObjectShape', () => {
  it('judges free-form JSON values in the form they are written in', () => {
    const revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r', namespace: 'default' },
      revision: 1,
      data: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } }, list: [1, 'two', null, true] },
    };
    expect(validateObjectShape(revision)).toMatchObject({ valid: true });
  });

  it.each(objects.map((object) => [object.kind, object] as const))('accepts the %s sample', (_kind, object) => {
    expect(validateObjectShape(object)).toStrictEqual({ valid: true, object });
  });

  it.each([
    ['not an object', 'pod', ''],
    ['no kind', { apiVersion: 'v1' }, 'kind'],
    ['unsupported kind', { kind: 'Widget' }, 'kind'],
    [
      'bad port',
      { ...pod, spec: { containers: [{ name: 'c', ports: [{ containerPort: '80' }] }] } },
      'spec.containers[0].ports[0].containerPort',
    ],
    ['unsupported field', { ...pod, status: { qosClas: 'Burstable' } }, 'status.qosClas'],
  ])('reports %s', (_case, object, path) => {
    const result = validateObjectShape(object);
    expect(result.valid).toBe(false);
    expect(result.valid === false && result.path).toBe(path);
  });
});
