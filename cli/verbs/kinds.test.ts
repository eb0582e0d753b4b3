import { describe, expect, it } from 'vitest';
import { collectionPath, historyKey, objectPath, parseObjectReference, resolveResourceType, typedName } from './kinds.ts';
import { parseLabelSelector, selectorMatches } from './selector.ts';

describe('resolveResourceType', () => {
  it.each([
    ['po', 'Pod'],
    ['pod', 'Pod'],
    ['pods', 'Pod'],
    ['Pod', 'Pod'],
    ['svc', 'Service'],
    ['deploy', 'Deployment'],
    ['deployments.apps', 'Deployment'],
    ['rs', 'ReplicaSet'],
    ['ep', 'Endpoints'],
    ['endpoints', 'Endpoints'],
    ['no', 'Node'],
    ['ns', 'Namespace'],
  ])('%s → %s', (name, kind) => {
    expect(resolveResourceType(name).kind).toBe(kind);
  });

  it('says the server lacks unknown types', () => {
    expect(() => resolveResourceType('widgets')).toThrow('the server doesn\'t have a resource type "widgets"');
    expect(() => resolveResourceType('pods.apps')).toThrow(/doesn't have/);
  });
});

describe('paths and names', () => {
  it('builds kube-apiserver paths', () => {
    const deploy = resolveResourceType('deploy');
    const node = resolveResourceType('node');
    expect(collectionPath(deploy, 'default')).toBe('/apis/apps/v1/namespaces/default/deployments');
    expect(collectionPath(deploy, undefined)).toBe('/apis/apps/v1/deployments');
    expect(objectPath(deploy, 'default', 'web', 'scale')).toBe('/apis/apps/v1/namespaces/default/deployments/web/scale');
    expect(objectPath(node, 'default', 'node-1')).toBe('/api/v1/nodes/node-1');
    expect(typedName(deploy, 'web')).toBe('deployment.apps/web');
    expect(typedName(resolveResourceType('svc'), 'web')).toBe('service/web');
    expect(historyKey(deploy, 'default', 'web')).toBe('Deployment/default/web');
    expect(historyKey(node, 'default', 'node-1')).toBe('Node//node-1');
  });

  it('parses KIND/NAME and KIND NAME', () => {
    expect(parseObjectReference(['deploy/web'], 'x')).toMatchObject({ type: { kind: 'Deployment' }, name: 'web' });
    expect(parseObjectReference(['po', 'web-1'], 'x')).toMatchObject({ type: { kind: 'Pod' }, name: 'web-1' });
    expect(() => parseObjectReference(['po'], 'KIND/NAME')).toThrow('expected KIND/NAME');
    expect(() => parseObjectReference(['po/a', 'b'], 'KIND/NAME')).toThrow(/no need to specify a resource type/);
  });
});

describe('label selectors', () => {
  it.each([
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'shop' }, false],
    ['app!=web', {}, true],
    ['app=web,tier in (a, b)', { app: 'web', tier: 'b' }, true],
    ['tier notin (a,b)', { tier: 'a' }, false],
    ['gpu', { gpu: '' }, true],
    ['!gpu', { gpu: '' }, false],
    ['', {}, true],
  ])('%s on %j → %s', (selector, labels, expected) => {
    expect(selectorMatches(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it('rejects what it cannot read', () => {
    expect(() => parseLabelSelector('a b c')).toThrow(/unable to parse requirement/);
  });
});
