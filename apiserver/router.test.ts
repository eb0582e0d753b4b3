import { describe, expect, it } from 'vitest';
import { route } from './router.ts';

const target = (path: string) => {
  const routed = route(path);
  if (routed.type !== 'resource') return routed.type;
  const t = routed.target;
  return [t.resource.plural, t.namespace ?? null, t.name ?? null, t.subresource ?? null, routed.watchPrefix];
};

describe('route', () => {
  it.each([
    ['/api/v1/namespaces/default/pods', ['pods', 'default', null, null, false]],
    ['/api/v1/namespaces/default/pods/web', ['pods', 'default', 'web', null, false]],
    ['/api/v1/namespaces/default/pods/web/status', ['pods', 'default', 'web', 'status', false]],
    ['/api/v1/namespaces/default/pods/web/binding', ['pods', 'default', 'web', 'binding', false]],
    ['/api/v1/namespaces/default/pods/web/log', ['pods', 'default', 'web', 'log', false]],
    ['/api/v1/pods', ['pods', null, null, null, false]],
    ['/api/v1/namespaces', ['namespaces', null, null, null, false]],
    ['/api/v1/namespaces/kube-system', ['namespaces', null, 'kube-system', null, false]],
    ['/api/v1/namespaces/kube-system/status', ['namespaces', null, 'kube-system', 'status', false]],
    ['/api/v1/nodes/n1', ['nodes', null, 'n1', null, false]],
    ['/api/v1/nodes/n1/status', ['nodes', null, 'n1', 'status', false]],
    ['/apis/apps/v1/namespaces/ns/deployments/web/scale', ['deployments', 'ns', 'web', 'scale', false]],
    ['/apis/apps/v1/replicasets', ['replicasets', null, null, null, false]],
    ['/api/v1/watch/namespaces/default/pods', ['pods', 'default', null, null, true]],
    ['/api/v1/namespaces/default/endpoints/', ['endpoints', 'default', null, null, false]],
  ])('%s', (path, expected) => {
    expect(target(path)).toEqual(expected);
  });

  it.each([
    ['/api/v1/pods/web', 'notFound'],
    ['/api/v1/namespaces/default/pods/web/proxy', 'notFound'],
    ['/api/v1/namespaces/default/deployments', 'notFound'],
    ['/apis/apps/v1/namespaces/default/pods', 'notFound'],
    ['/apis/batch/v1/widgets', 'notFound'],
    ['/api/v2/pods', 'notFound'],
    ['/api', 'apiVersions'],
    ['/apis', 'apiGroupList'],
    ['/apis/apps', 'apiGroup'],
    ['/api/v1', 'resourceList'],
    ['/apis/apps/v1', 'resourceList'],
    ['/version', 'version'],
    ['/healthz', 'health'],
    ['/metrics', 'metrics'],
    ['/openapi/v3', 'openapiV3Index'],
    ['/openapi/v3/apis/apps/v1', 'openapiV3Document'],
    ['/openapi/v2', 'openapiV2'],
    ['/api/v1/namespaces/default/bindings', 'bindings'],
  ])('%s is %s', (path, type) => {
    expect(route(path).type).toBe(type);
  });
});
