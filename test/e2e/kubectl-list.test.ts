/**
 * kubectl's client-side validation of `kind: List` files, on both logs: kubectl validates
 * a List's items itself, against `/openapi/v2` (the protobuf document), since server-side
 * field validation sees only one object at a time. A valid List is created; a List with an
 * unknown field and a mistyped one is refused by kubectl with its messages naming them, and
 * nothing of it reaches the server.
 */
import { describe, expect, it } from 'vitest';
import { LOG_ADAPTERS } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const item = (name: string, extra = '') => `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: ${name}
  data:
    key: value
${extra}`;

const deployment = (replicas: string) => `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: listed
  spec:
    replicas: ${replicas}
    selector:
      matchLabels: {app: listed}
    template:
      metadata:
        labels: {app: listed}
      spec:
        containers: [{name: main, image: logplane/sleeper}]
`;

describe.each(LOG_ADAPTERS)('kubectl apply of a kind: List on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-kubectl-list');
  const { kubectl } = harness;
  const file = (name: string, items: string): string => harness.file(name, `apiVersion: v1\nkind: List\nitems:\n${items}`);

  it('creates every item of a valid List', async () => {
    const result = await kubectl('apply', '-f', file('valid.yaml', item('listed-a') + deployment('2')));
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('configmap/listed-a created');
    expect(result.stdout).toContain('deployment.apps/listed created');
    expect(harness.cluster.projection.view().get('ConfigMap/default/listed-a')).toBeDefined();
  });

  it('refuses a List with an unknown and a mistyped field on the client, naming both, and creates nothing', async () => {
    const result = await kubectl('apply', '-f', file('invalid.yaml', item('listed-b', '  bogus: 1\n') + deployment('"two"').replace('name: listed', 'name: listed-bad')));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('unknown field "bogus" in io.k8s.api.core.v1.ConfigMap');
    expect(result.stderr).toContain('invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", expected "integer"');
    expect(harness.cluster.projection.view().get('ConfigMap/default/listed-b')).toBeUndefined();
    expect(harness.cluster.projection.view().get('Deployment/default/listed-bad')).toBeUndefined();
  });
});
