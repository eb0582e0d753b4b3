import { describe, expect, it } from 'vitest';
import { desiredObject, LAST_APPLIED_ANNOTATION, parseManifests, planUpdate, targetOf, threeWayMerge } from './apply.ts';
import { serverResources } from './discovery.fixture.ts';

/** What the apiserver's discovery serves. */
const resources = await serverResources();

const MULTI = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: echo
        image: echo:1
---
# a comment-only document is skipped
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
...
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: shop}
- apiVersion: v1
  kind: Pod
  metadata: {name: one}
  spec: {containers: [{name: c, image: i}]}
`;

describe('parseManifests', () => {
  it('reads every document, skips empty ones and expands Lists', () => {
    const manifests = parseManifests(MULTI, 'app.yaml');
    expect(manifests.map((m) => `${m.object['kind']}/${(m.object['metadata'] as { name: string }).name}`)).toEqual([
      'Deployment/web',
      'Service/web',
      'Namespace/shop',
      'Pod/one',
    ]);
    expect(manifests.every((m) => m.source === 'app.yaml')).toBe(true);
    expect(manifests[0]?.object['spec']).toMatchObject({ replicas: 2, template: { spec: { containers: [{ name: 'echo', image: 'echo:1' }] } } });
  });

  it('reads JSON', () => {
    const manifests = parseManifests('{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}', 'ns.json');
    expect(manifests).toHaveLength(1);
  });

  it('returns nothing for an empty file', () => {
    expect(parseManifests('', 'empty.yaml')).toEqual([]);
    expect(parseManifests('---\n---\n', 'empty.yaml')).toEqual([]);
  });

  it.each([
    ['kind: Pod\nmetadata: {name: x}\n', /apiVersion not set/],
    ['apiVersion: v1\nmetadata: {name: x}\n', /kind not set/],
    ['- a\n- b\n', /not an object/],
    ['apiVersion: v1\nkind: Pod\n  bad: indentation\n', /error parsing bad.yaml/],
  ])('rejects %j', (text, message) => {
    expect(() => parseManifests(text, 'bad.yaml')).toThrow(message);
  });
});

describe('targetOf', () => {
  const [deployment, service, namespace] = parseManifests(MULTI, 'app.yaml');

  it('resolves kind, namespace and name', () => {
    expect(targetOf(deployment!, resources, 'default', false)).toMatchObject({ type: { kind: 'Deployment', plural: 'deployments' }, namespace: 'default', name: 'web' });
    expect(targetOf(service!, resources, 'default', false)).toMatchObject({ namespace: 'shop' });
    expect(targetOf(namespace!, resources, 'default', false)).toMatchObject({ namespace: undefined, name: 'shop' });
  });

  it('refuses a manifest namespace that contradicts -n, like kubectl', () => {
    expect(() => targetOf(service!, resources, 'other', true)).toThrow(/the namespace from the provided object "shop" does not match the namespace "other"/);
  });

  it('refuses unknown kinds and wrong apiVersions', () => {
    const [crd] = parseManifests('apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n', 'w.yaml');
    expect(() => targetOf(crd!, resources, 'default', false)).toThrow(/no matches for kind "Widget" in version "example.com\/v1"/);
    const [wrong] = parseManifests('apiVersion: v1\nkind: Deployment\nmetadata: {name: w}\n', 'w.yaml');
    expect(() => targetOf(wrong!, resources, 'default', false)).toThrow(/no matches for kind "Deployment" in version "v1"/);
  });
});

describe('threeWayMerge', () => {
  it('keeps server-defaulted fields, merges named lists by name, and drops fields the manifest stopped setting', () => {
    const current = {
      metadata: { name: 'web', uid: 'u1', resourceVersion: '7', labels: { app: 'web', old: 'x' } },
      spec: { replicas: 3, containers: [{ name: 'echo', image: 'echo:1', imagePullPolicy: 'IfNotPresent' }], clusterIP: '127.96.0.1' },
      status: { phase: 'Running' },
    };
    const lastApplied = { metadata: { name: 'web', labels: { app: 'web', old: 'x' } }, spec: { replicas: 3, containers: [{ name: 'echo', image: 'echo:1' }] } };
    const desired = { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'echo', image: 'echo:2' }] } };
    expect(threeWayMerge(current, desired, lastApplied)).toEqual({
      metadata: { name: 'web', uid: 'u1', resourceVersion: '7', labels: { app: 'web' } },
      spec: { containers: [{ name: 'echo', image: 'echo:2', imagePullPolicy: 'IfNotPresent' }], clusterIP: '127.96.0.1' },
      status: { phase: 'Running' },
    });
  });

  it('merges ports by number, keeping the defaulted protocol', () => {
    const current = { spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], containers: [{ name: 'c', ports: [{ containerPort: 8080, protocol: 'TCP' }] }] } };
    const desired = { spec: { ports: [{ port: 80, targetPort: 8080 }], containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] } };
    expect(threeWayMerge(current, desired, desired)).toEqual(current);
  });

  it('replaces unnamed lists and removes null fields', () => {
    expect(threeWayMerge({ a: [1, 2], b: 1 }, { a: [3], b: null }, undefined)).toEqual({ a: [3] });
  });
});

describe('planUpdate', () => {
  const manifest = parseManifests(MULTI, 'app.yaml')[0]!;
  const target = targetOf(manifest, resources, 'default', false);
  const desired = desiredObject(manifest, target);
  const live = (): Record<string, unknown> => ({
    ...structuredClone(desired),
    metadata: {
      ...(desired['metadata'] as object),
      uid: 'u1',
      resourceVersion: '12',
      generation: 1,
      creationTimestamp: '2024-05-01T12:00:00Z',
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(desired), 'deployment.kubernetes.io/revision': '1' },
    },
    status: { replicas: 2 },
  });

  it('is unchanged when the live object already matches the manifest', () => {
    expect(planUpdate(live(), desired)).toBeUndefined();
  });

  it('puts the merged object with the live resourceVersion and the new last-applied annotation', () => {
    const changed = structuredClone(desired);
    (changed['spec'] as { replicas: number }).replicas = 5;
    const update = planUpdate(live(), changed);
    expect(update).toMatchObject({
      metadata: {
        resourceVersion: '12',
        uid: 'u1',
        annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(changed), 'deployment.kubernetes.io/revision': '1' },
      },
      spec: { replicas: 5 },
      status: { replicas: 2 },
    });
  });

  it('records the namespace and strips server-owned fields from the manifest', () => {
    const [exported] = parseManifests(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p, resourceVersion: "3", uid: x, annotations: {a: b}}\nspec: {containers: []}\nstatus: {phase: Running}\n',
      'p.yaml',
    );
    const result = desiredObject(exported!, targetOf(exported!, resources, 'default', false));
    expect(result).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', annotations: { a: 'b' } }, spec: { containers: [] } });
  });
});
