import { describe, expect, it } from 'vitest';
import { parseGetArgs, parseOutputFormat } from './get.ts';

const summary = (args: string[]) => {
  const { requests, several } = parseGetArgs(args);
  return { kinds: requests.map((r) => `${r.type.kind}${r.names ? `:${r.names.join('+')}` : ''}`), several };
};

describe('parseGetArgs', () => {
  it.each<[string[], { kinds: string[]; several: boolean }]>([
    [['pods'], { kinds: ['Pod'], several: false }],
    [['po', 'a', 'b'], { kinds: ['Pod:a+b'], several: false }],
    [['pods,svc'], { kinds: ['Pod', 'Service'], several: true }],
    [['all'], { kinds: ['Pod', 'Service', 'Deployment', 'ReplicaSet'], several: true }],
    [['deploy/web', 'pod/a', 'deployments/api'], { kinds: ['Deployment:web+api', 'Pod:a'], several: true }],
    [['deploy/web'], { kinds: ['Deployment:web'], several: false }],
    [['po,pods'], { kinds: ['Pod'], several: false }],
  ])('%j', (args, expected) => {
    expect(summary(args)).toEqual(expected);
  });

  it('refuses names with several kinds and mixed forms', () => {
    expect(() => parseGetArgs(['pods,svc', 'web'])).toThrow(/one resource type/);
    expect(() => parseGetArgs(['pod/a', 'b'])).toThrow(/resource\/name form/);
    expect(() => parseGetArgs([])).toThrow(/type of resource/);
  });
});

describe('parseOutputFormat', () => {
  it('accepts kubectl formats and names the allowed ones otherwise', () => {
    expect(parseOutputFormat(undefined)).toBe('table');
    expect(parseOutputFormat('wide')).toBe('wide');
    expect(() => parseOutputFormat('jsonpath')).toThrow('unable to match a printer suitable for the output format "jsonpath", allowed formats are: json,name,wide,yaml');
  });
});
