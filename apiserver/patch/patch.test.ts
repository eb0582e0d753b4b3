import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { jsonPatch, mergePatch, patchTypeOf, strategicMerge } from './index.ts';

const pod = {
  metadata: { name: 'p', labels: { app: 'web', tier: 'front' }, finalizers: ['a'] },
  spec: {
    containers: [
      { name: 'web', image: 'nginx:1', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }] },
      { name: 'side', image: 'busybox' },
    ],
  },
};

describe('JSON merge patch (RFC 7386)', () => {
  it.each([
    ['replaces scalars', { a: 1 }, { a: 2 }, { a: 2 }],
    ['merges objects', { a: { b: 1, c: 2 } }, { a: { b: 3 } }, { a: { b: 3, c: 2 } }],
    ['deletes with null', { a: 1, b: 2 }, { a: null }, { b: 2 }],
    ['replaces lists whole', { a: [1, 2] }, { a: [3] }, { a: [3] }],
    ['adds missing objects', {}, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('%s', (_title, target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name, ports by containerPort and env by name', () => {
    const patched = strategicMerge('Pod', [], pod, {
      spec: {
        containers: [
          { name: 'web', image: 'nginx:2', ports: [{ containerPort: 443 }], env: [{ name: 'A', value: '2' }, { name: 'B', value: '3' }] },
        ],
      },
    }) as typeof pod;
    expect(patched.spec.containers.map((c) => c.name)).toEqual(['web', 'side']);
    expect(patched.spec.containers[0]).toEqual({
      name: 'web',
      image: 'nginx:2',
      ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }],
      env: [{ name: 'A', value: '2' }, { name: 'B', value: '3' }],
    });
  });

  it('deletes list items with $patch: delete and maps with null', () => {
    const patched = strategicMerge('Pod', [], pod, {
      metadata: { labels: { tier: null } },
      spec: { containers: [{ name: 'side', $patch: 'delete' }] },
    }) as typeof pod;
    expect(patched.metadata.labels).toEqual({ app: 'web' });
    expect(patched.spec.containers.map((c) => c.name)).toEqual(['web']);
  });

  it('follows $setElementOrder, $deleteFromPrimitiveList and $retainKeys like kubectl apply sends them', () => {
    const patched = strategicMerge('Pod', [], pod, {
      metadata: { finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        '$setElementOrder/containers': [{ name: 'side' }, { name: 'web' }],
        containers: [{ name: 'side', image: 'busybox:2' }],
      },
    }) as typeof pod;
    expect(patched.metadata.finalizers).toEqual(['b']);
    expect(patched.spec.containers.map((c) => `${c.name}=${c.image}`)).toEqual(['side=busybox:2', 'web=nginx:1']);
    const retained = strategicMerge('Deployment', [], { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } }, {
      spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
    });
    expect(retained).toEqual({ spec: { strategy: { type: 'Recreate' } } });
  });

  it('merges service ports by port', () => {
    const service = { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
    expect(strategicMerge('Service', [], service, { spec: { ports: [{ port: 80, targetPort: 9090 }] } })).toEqual({
      spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] },
    });
  });

  it('replaces lists without a merge key and whole maps with $patch: replace', () => {
    const patched = strategicMerge('Pod', [], { spec: { tolerations: [{ key: 'a' }], nodeSelector: { a: '1', b: '2' } } }, {
      spec: { tolerations: [{ key: 'b' }], nodeSelector: { $patch: 'replace', c: '3' } },
    });
    expect(patched).toEqual({ spec: { tolerations: [{ key: 'b' }], nodeSelector: { c: '3' } } });
  });

  it('rejects list items without their merge key', () => {
    expect(() => strategicMerge('Pod', [], pod, { spec: { containers: [{ image: 'x' }] } })).toThrow(ApiError);
  });

  it.each([
    // Lists the API types tag with a merge key, at any depth and in any kind.
    ['MutatingWebhookConfiguration', { webhooks: [{ name: 'a', timeoutSeconds: 5 }, { name: 'b' }] }, { webhooks: [{ name: 'a', timeoutSeconds: 9 }] }, { webhooks: [{ name: 'a', timeoutSeconds: 9 }, { name: 'b' }] }],
    ['Pod', { spec: { hostAliases: [{ ip: '10.0.0.1', hostnames: ['a'] }] } }, { spec: { hostAliases: [{ ip: '10.0.0.2', hostnames: ['b'] }] } }, { spec: { hostAliases: [{ ip: '10.0.0.1', hostnames: ['a'] }, { ip: '10.0.0.2', hostnames: ['b'] }] } }],
    ['Deployment', { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: '1' }] }] } } } }, { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'B', value: '2' }] }] } } } }, { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }] } } } }],
    ['Deployment', { spec: { template: { spec: { topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1 }] } } } }, { spec: { template: { spec: { topologySpreadConstraints: [{ topologyKey: 'host', maxSkew: 2 }] } } } }, { spec: { template: { spec: { topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1 }, { topologyKey: 'host', maxSkew: 2 }] } } } }],
    ['ConfigMap', { metadata: { finalizers: ['a'] } }, { metadata: { finalizers: ['b'] } }, { metadata: { finalizers: ['a', 'b'] } }],
    // Lists without a patch strategy are replaced whole.
    ['ClusterRole', { rules: [{ verbs: ['get'], resources: ['pods'] }] }, { rules: [{ verbs: ['list'], resources: ['pods'] }] }, { rules: [{ verbs: ['list'], resources: ['pods'] }] }],
    ['Endpoints', { subsets: [{ ports: [{ port: 1 }] }] }, { subsets: [{ ports: [{ port: 2 }] }] }, { subsets: [{ ports: [{ port: 2 }] }] }],
  ] as const)('merges %s lists as the API types\' patch strategies say', (kind, original, patch, expected) => {
    expect(strategicMerge(kind, [], structuredClone(original) as never, structuredClone(patch) as never)).toEqual(expected);
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('adds, replaces, removes, moves, copies and tests', () => {
    const result = jsonPatch({ a: { b: 1 }, list: [1, 2] }, [
      { op: 'add', path: '/a/c', value: 2 },
      { op: 'replace', path: '/a/b', value: 3 },
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'add', path: '/list/0', value: 0 },
      { op: 'remove', path: '/list/1' },
      { op: 'copy', from: '/a/c', path: '/d' },
      { op: 'move', from: '/d', path: '/e' },
      { op: 'test', path: '/e', value: 2 },
    ]);
    expect(result).toEqual({ a: { b: 3, c: 2 }, list: [0, 2, 3], e: 2 });
  });

  it('answers a failed test or a missing path with 422', () => {
    for (const ops of [[{ op: 'test', path: '/a', value: 2 }], [{ op: 'remove', path: '/missing' }], [{ op: 'replace', path: '/x/y', value: 1 }]]) {
      try {
        jsonPatch({ a: 1 }, ops);
        expect.unreachable();
      } catch (error) {
        expect((error as ApiError).status.code).toBe(422);
      }
    }
  });
});

describe('patch types', () => {
  it('maps media types, the apply patch in YAML and JSON, refusing unknown ones with 415', () => {
    expect(patchTypeOf('application/merge-patch+json')).toBe('merge');
    expect(patchTypeOf('application/strategic-merge-patch+json')).toBe('strategic');
    expect(patchTypeOf('application/json-patch+json')).toBe('json');
    expect(patchTypeOf('application/apply-patch+yaml')).toBe('apply');
    expect(patchTypeOf('application/apply-patch+json')).toBe('apply');
    try {
      patchTypeOf('text/plain');
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).status).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
      expect((error as ApiError).message).toContain('accepted media types include');
    }
  });
});
