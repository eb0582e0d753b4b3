import { describe, expect, it } from 'vitest';
import { collidingResources } from './discovery.fixture.ts';
import { parseGetArgs, parseOutputFormat } from './get.ts';

const resources = collidingResources();

const summary = (args: string[]) => {
  const { requests, several } = parseGetArgs(args, resources);
  return { kinds: requests.map((r) => `${r.type.kind}${r.names ? `:${r.names.join('+')}` : ''}`), several };
};

describe('parseGetArgs', () => {
  it.each<[string[], { kinds: string[]; several: boolean }]>([
    [['pods'], { kinds: ['Pod'], several: false }],
    [['po', 'a', 'b'], { kinds: ['Pod:a+b'], several: false }],
    [['pods,svc'], { kinds: ['Pod', 'Service'], several: true }],
    // `all` is the discovery category, in discovery order.
    [['all'], { kinds: ['Pod', 'Service', 'Deployment', 'ReplicaSet', 'HorizontalPodAutoscaler'], several: true }],
    [['deployments/web', 'pod/a', 'deployments.apps/api'], { kinds: ['Deployment:web+api', 'Pod:a'], several: true }],
    [['deploy.apps/web'], { kinds: ['Deployment:web'], several: false }],
    [['po,pods'], { kinds: ['Pod'], several: false }],
  ])('%j', (args, expected) => {
    expect(summary(args)).toEqual(expected);
  });

  it('refuses names with several kinds, mixed forms and unknown types', () => {
    expect(() => parseGetArgs(['pods,svc', 'web'], resources)).toThrow(/one resource type/);
    expect(() => parseGetArgs(['pod/a', 'b'], resources)).toThrow(/resource\/name form/);
    expect(() => parseGetArgs([], resources)).toThrow(/type of resource/);
    expect(() => parseGetArgs(['pods,widgets'], resources)).toThrow('the server doesn\'t have a resource type "widgets"');
  });
});

describe('parseOutputFormat', () => {
  it('accepts kubectl formats and names the allowed ones otherwise', () => {
    expect(parseOutputFormat(undefined)).toBe('table');
    expect(parseOutputFormat('wide')).toBe('wide');
    expect(() => parseOutputFormat('jsonpath')).toThrow('unable to match a printer suitable for the output format "jsonpath", allowed formats are: json,name,wide,yaml');
  });
});
