import { describe, expect, it } from 'vitest';
import {
  type LabelRequirement,
  labelSelectorToRequirements,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorParseError,
  selectorToString,
} from './selectors.ts';

function parsed(input: string): readonly LabelRequirement[] {
  const result = parseLabelSelector(input);
  if (result.type !== 'ok') throw result.error;
  return result.requirements;
}

describe('parseLabelSelector', () => {
  it.each<[string, LabelRequirement[]]>([
    ['', []],
    ['   ', []],
    ['a=b', [{ type: 'equals', key: 'a', value: 'b' }]],
    ['a==b', [{ type: 'equals', key: 'a', value: 'b' }]],
    ['a = b', [{ type: 'equals', key: 'a', value: 'b' }]],
    ['a=', [{ type: 'equals', key: 'a', value: '' }]],
    ['a!=b', [{ type: 'notEquals', key: 'a', value: 'b' }]],
    ['a!=', [{ type: 'notEquals', key: 'a', value: '' }]],
    ['a in (y,x)', [{ type: 'in', key: 'a', values: ['x', 'y'] }]],
    ['a in(x, x ,y)', [{ type: 'in', key: 'a', values: ['x', 'y'] }]],
    ['a in (x,)', [{ type: 'in', key: 'a', values: ['', 'x'] }]],
    ['a in (,)', [{ type: 'in', key: 'a', values: [''] }]],
    ['a notin (x)', [{ type: 'notIn', key: 'a', values: ['x'] }]],
    ['a in (in,notin)', [{ type: 'in', key: 'a', values: ['in', 'notin'] }]],
    ['a', [{ type: 'exists', key: 'a' }]],
    ['!a', [{ type: 'doesNotExist', key: 'a' }]],
    [' ! a ', [{ type: 'doesNotExist', key: 'a' }]],
    ['a>5', [{ type: 'greaterThan', key: 'a', value: 5 }]],
    ['a<-1', [{ type: 'lessThan', key: 'a', value: -1 }]],
    [
      'tier=web,!canary,env in (prod),app',
      [
        { type: 'exists', key: 'app' },
        { type: 'doesNotExist', key: 'canary' },
        { type: 'in', key: 'env', values: ['prod'] },
        { type: 'equals', key: 'tier', value: 'web' },
      ],
    ],
    ['app.kubernetes.io/name=web', [{ type: 'equals', key: 'app.kubernetes.io/name', value: 'web' }]],
    ['k=A-b_c.D9', [{ type: 'equals', key: 'k', value: 'A-b_c.D9' }]],
  ])('%j', (input, expected) => {
    expect(parsed(input)).toEqual(expected);
  });

  it.each([
    ['a=b=c', "'='", '='],
    ['a,', 'end of input', ''],
    [',a', "','", ','],
    ['a b', "'b'", 'b'],
    ['a in x', "'x'", 'x'],
    ['a in (x', 'end of input', ''],
    ['a in (x y)', "'y'", 'y'],
    ['a in ()', 'cannot be empty', ')'],
    ['a notin (x', 'end of input', ''],
    ['in=b', "'in'", 'in'],
    ['!', 'end of input', ''],
    ['!a=b', "'='", '='],
    ['a>b', '"b" is not an integer', 'b'],
    ['a>', 'end of input', ''],
    ['a(b)', "'('", '('],
    ['Bad Key=1', "'Key'", 'Key'],
    ['-a=b', 'invalid label key "-a"', '-a'],
    ['a/b/c=d', 'at most one', 'a/b/c'],
    ['UPPER.example/a=b', 'prefix', 'UPPER.example/a'],
    ['a=-b', 'invalid label value "-b"', '-b'],
    [`a=${'x'.repeat(64)}`, 'invalid label value', 'x'.repeat(64)],
    ['a in (ok,b@d)', 'invalid label value "b@d"', 'b@d'],
  ])('rejects %j, naming %s', (input, inMessage, token) => {
    const result = parseLabelSelector(input);
    expect(result.type).toBe('invalid');
    if (result.type !== 'invalid') return;
    expect(result.error).toBeInstanceOf(SelectorParseError);
    expect(result.error.message).toContain(inMessage);
    expect(result.error.message).toContain(JSON.stringify(input));
    expect(result.error.token).toBe(token);
    expect(input.slice(result.error.position)).toMatch(new RegExp(`^\\s*${token.replace(/[().]/g, '\\$&')}`));
  });
});

describe('matchesLabels', () => {
  const labels = { app: 'web', tier: 'frontend', replicas: '3' };
  it.each([
    ['', labels, true],
    ['app=web', labels, true],
    ['app=api', labels, false],
    ['app!=api', labels, true],
    ['missing!=x', labels, true],
    ['app!=web', labels, false],
    ['missing=', labels, false],
    ['tier in (frontend,backend)', labels, true],
    ['missing in (x)', labels, false],
    ['tier notin (frontend)', labels, false],
    ['missing notin (x)', labels, true],
    ['app', labels, true],
    ['missing', labels, false],
    ['!missing', labels, true],
    ['!app', labels, false],
    ['replicas>2', labels, true],
    ['replicas>3', labels, false],
    ['replicas<4', labels, true],
    ['app>1', labels, false],
    ['missing<1', labels, false],
    ['app=web,tier=backend', labels, false],
    ['app=web,tier=frontend', labels, true],
    ['app', undefined, false],
    ['!app', undefined, true],
    ['constructor', {}, false],
  ])('%j on %j → %s', (selector, subject, expected) => {
    expect(matchesLabels(parsed(selector), subject)).toBe(expected);
  });
});

describe('labelSelectorToRequirements', () => {
  it.each<[Parameters<typeof labelSelectorToRequirements>[0], LabelRequirement[]]>([
    [{}, []],
    [
      { matchLabels: { b: '2', a: '1' } },
      [
        { type: 'equals', key: 'a', value: '1' },
        { type: 'equals', key: 'b', value: '2' },
      ],
    ],
    [
      {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'dev', 'prod'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'NotIn', values: ['b'] },
          { key: 'tier', operator: 'Exists', values: [] },
        ],
      },
      [
        { type: 'equals', key: 'app', value: 'web' },
        { type: 'doesNotExist', key: 'canary' },
        { type: 'in', key: 'env', values: ['dev', 'prod'] },
        { type: 'exists', key: 'tier' },
        { type: 'notIn', key: 'zone', values: ['b'] },
      ],
    ],
  ])('%j', (selector, expected) => {
    expect(labelSelectorToRequirements(selector)).toEqual({ type: 'ok', requirements: expected });
  });

  it.each<[Parameters<typeof labelSelectorToRequirements>[0], string, string]>([
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, 'must be non-empty', 'In'],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }, 'must be non-empty', 'NotIn'],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'must be empty', 'Exists'],
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, 'not a valid label selector operator', 'Gt'],
    [{ matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] }, 'not a valid label selector operator', 'in'],
    [{ matchExpressions: [{ key: 'bad key', operator: 'Exists' }] }, 'matchExpressions[0].key', 'bad key'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'no good'] }] }, 'no good', 'no good'],
    [{ matchLabels: { 'a/b/c': 'x' } }, 'at most one', 'a/b/c'],
    [{ matchLabels: { a: 'x y' } }, 'matchLabels["a"]', 'x y'],
  ])('rejects %j', (selector, inMessage, token) => {
    const result = labelSelectorToRequirements(selector);
    expect(result.type).toBe('invalid');
    if (result.type !== 'invalid') return;
    expect(result.error.message).toContain(inMessage);
    expect(result.error.token).toBe(token);
    expect(result.error.position).toBeUndefined();
  });
});

describe('selectorToString', () => {
  it.each([
    ['', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a=b'],
    ['a!=', 'a!='],
    ['b in (y,x),a notin (z)', 'a notin (z),b in (x,y)'],
    ['!a,b', '!a,b'],
    ['a>1,b<2', 'a>1,b<2'],
    ['a in (x,)', 'a in (,x)'],
  ])('%j → %j and parses back to the same requirements', (input, expected) => {
    const requirements = parsed(input);
    const printed = selectorToString(requirements);
    expect(printed).toBe(expected);
    expect(parsed(printed)).toEqual(requirements);
  });
});

describe('parseFieldSelector', () => {
  const podFields = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'];

  it.each([
    ['', []],
    ['metadata.name=x', [{ type: 'equals', field: 'metadata.name', value: 'x' }]],
    ['metadata.name==x', [{ type: 'equals', field: 'metadata.name', value: 'x' }]],
    ['spec.nodeName=', [{ type: 'equals', field: 'spec.nodeName', value: '' }]],
    [
      'metadata.name=x,spec.nodeName!=y',
      [
        { type: 'equals', field: 'metadata.name', value: 'x' },
        { type: 'notEquals', field: 'spec.nodeName', value: 'y' },
      ],
    ],
    ['metadata.name=a\\,b\\=c\\\\', [{ type: 'equals', field: 'metadata.name', value: 'a,b=c\\' }]],
    ['status.phase=Running,', [{ type: 'equals', field: 'status.phase', value: 'Running' }]],
  ])('%j', (input, expected) => {
    expect(parseFieldSelector(input, podFields)).toEqual({ type: 'ok', requirements: expected });
  });

  it.each([
    ['spec.restartPolicy=Always', 'field label not supported: "spec.restartPolicy"', 'spec.restartPolicy', 0],
    ['metadata.name=x,bogus!=y', 'field label not supported: "bogus"', 'bogus', 16],
    ['metadata.name', 'has no operator', 'metadata.name', 0],
    ['metadata.name=a=b', 'unescaped "="', 'a=b', 0],
    ['metadata.name=a\\x', 'invalid escape sequence "\\x"', 'a\\x', 0],
    ['metadata.name=a\\', 'invalid escape sequence "\\"', 'a\\', 0],
  ])('rejects %j', (input, inMessage, token, position) => {
    const result = parseFieldSelector(input, podFields);
    expect(result.type).toBe('invalid');
    if (result.type !== 'invalid') return;
    expect(result.error.message).toContain(inMessage);
    expect(result.error.token).toBe(token);
    expect(result.error.position).toBe(position);
  });
});

describe('matchesFields', () => {
  const pod: Record<string, string | undefined> = { 'metadata.name': 'web-1', 'status.phase': 'Running' };
  const fields = ['metadata.name', 'spec.nodeName', 'status.phase'];
  it.each([
    ['', true],
    ['metadata.name=web-1', true],
    ['metadata.name=web-2', false],
    ['metadata.name!=web-2,status.phase=Running', true],
    ['spec.nodeName=', true],
    ['spec.nodeName!=', false],
    ['spec.nodeName!=node-1', true],
  ])('%j → %s', (selector, expected) => {
    const result = parseFieldSelector(selector, fields);
    if (result.type !== 'ok') throw result.error;
    expect(matchesFields(result.requirements, (field) => pod[field])).toBe(expected);
  });
});
