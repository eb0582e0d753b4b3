import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../schemas/index.ts';
import { managersChanged } from './field-managers.ts';

const withManagers = (...entries: { manager: string; operation: string; time: string; replicas?: boolean; subresource?: string }[]): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'c',
      namespace: 'default',
      managedFields: entries.map((e) => ({
        manager: e.manager,
        operation: e.operation,
        time: e.time,
        fieldsType: 'FieldsV1',
        fieldsV1: e.replicas ? { 'f:data': { 'f:a': {}, 'f:b': {} } } : { 'f:data': { 'f:a': {} } },
        ...(e.subresource ? { subresource: e.subresource } : {}),
      })),
    },
  }) as KubeObject;

describe('managersChanged', () => {
  it('names the entries a version added or changed (time or owned fields), not the ones it kept', () => {
    const v1 = withManagers({ manager: 'kubectl', operation: 'Apply', time: 't1' });
    expect(managersChanged(null, v1)).toEqual([{ manager: 'kubectl', operation: 'Apply' }]);
    const v2 = withManagers({ manager: 'kubectl', operation: 'Apply', time: 't1' }, { manager: 'editor', operation: 'Update', time: 't2' });
    expect(managersChanged(v1, v2)).toEqual([{ manager: 'editor', operation: 'Update' }]);
    // Same time, more fields owned: a change of that manager's entry.
    const v3 = withManagers({ manager: 'kubectl', operation: 'Apply', time: 't1', replicas: true }, { manager: 'editor', operation: 'Update', time: 't2' });
    expect(managersChanged(v2, v3)).toEqual([{ manager: 'kubectl', operation: 'Apply' }]);
    // The same manager's status entry is its own entry.
    const v4 = withManagers({ manager: 'kubectl', operation: 'Apply', time: 't1', replicas: true }, { manager: 'editor', operation: 'Update', time: 't2' }, { manager: 'kubectl', operation: 'Apply', time: 't4', subresource: 'status' });
    expect(managersChanged(v3, v4)).toEqual([{ manager: 'kubectl', operation: 'Apply', subresource: 'status' }]);
    expect(managersChanged(v4, v4)).toEqual([]);
    expect(managersChanged(null, null)).toEqual([]);
  });
});
