import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf } from './protobuf.ts';

/** The body kubectl v1.32 sent for `kubectl create deployment capture2 --image=nginx:1.27 --replicas=3 --port=8080`. */
const KUBECTL_CREATE_DEPLOYMENT = [
  '6b387300 0a150a07 61707073 2f763112 0a446570 6c6f796d 656e7412 d2010a29',
  '0a086361 70747572 65321200 1a002200 2a003200 38004200 5a0f0a03 61707012',
  '08636170 74757265 32129601 08031211 0a0f0a03 61707012 08636170 74757265',
  '321a770a 210a0012 001a0022 002a0032 00380042 005a0f0a 03617070 12086361',
  '70747572 65321252 12340a05 6e67696e 78120a6e 67696e78 3a312e32 372a0032',
  '0b0a0010 0018903f 22002a00 42006a00 72008001 00880100 900100a2 01001a00',
  '32004200 4a005200 58006000 68008201 008a0100 9a0100c2 01002202 0a002800',
  '38001a0c 08001000 18002000 28003800 1a002200',
].join('').replace(/ /g, '');

describe('decodeKubernetesProtobuf', () => {
  it('reads what kubectl create deployment sends, dropping zero scalars like JSON omitempty', () => {
    expect(decodeKubernetesProtobuf(Buffer.from(KUBECTL_CREATE_DEPLOYMENT, 'hex'))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'capture2', labels: { app: 'capture2' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'capture2' } },
        template: {
          metadata: { labels: { app: 'capture2' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }], resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
  });

  it('round-trips objects with maps, int-or-strings, quantities, times and inlined probe handlers', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z', annotations: { a: 'b' } },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sh', '-c', 'sleep 1'],
            env: [{ name: 'A', value: '1' }],
            resources: { requests: { cpu: '100m', memory: '64Mi' } },
            livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
            readinessProbe: { tcpSocket: { port: 8080 } },
          },
        ],
        terminationGracePeriodSeconds: 0,
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'busybox', ready: false, restartCount: 0 }] },
    };
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf('v1', 'Pod', pod))).toEqual({ apiVersion: 'v1', kind: 'Pod', ...pod });
  });

  it('keeps zero where it is a value (replicas: 0) and names fields logplane does not model', () => {
    const decoded = decodeKubernetesProtobuf(
      encodeKubernetesProtobuf('apps/v1', 'Deployment', {
        metadata: { name: 'd' },
        spec: { replicas: 0, template: { spec: { containers: [{ name: 'c' }], volumes: [{}] } } },
      }),
    ) as { spec: { replicas: number; template: { spec: Record<string, unknown> } } };
    expect(decoded.spec.replicas).toBe(0);
    expect(decoded.spec.template.spec['volumes']).toEqual([{ '(protobuf)': '2 bytes' }]);
  });

  it('decodes DeleteOptions with a zero grace period', () => {
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf('v1', 'DeleteOptions', { gracePeriodSeconds: 0, propagationPolicy: 'Foreground' }))).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      propagationPolicy: 'Foreground',
    });
  });

  it('answers kinds it has no table for with 415 and garbage with 400', () => {
    // runtime.Unknown{typeMeta: {apiVersion: v1, kind: Event}}: a kind without a table here.
    const secret = Buffer.from('6b3873000a0b0a0276311205' + Buffer.from('Event').toString('hex'), 'hex');
    expect(() => decodeKubernetesProtobuf(secret)).toThrow(ApiError);
    try {
      decodeKubernetesProtobuf(secret);
    } catch (error) {
      expect((error as ApiError).status.code).toBe(415);
    }
    try {
      decodeKubernetesProtobuf(Buffer.from('6b387300ff', 'hex'));
    } catch (error) {
      expect((error as ApiError).status.code).toBe(400);
    }
  });
});
