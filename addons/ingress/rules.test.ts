/**
 * Rule matching of the Ingress controller, table-driven: path types as the Ingress API's
 * examples define them, host precedence (exact, wildcard of one label, hostless), longest
 * match first, default backends, IngressClass selection and SNI certificate choice.
 */
import { describe, expect, it } from 'vitest';
import type { Ingress, IngressClass, IngressRule } from '../../schemas/index.ts';
import {
  buildRoutingTable,
  DEFAULT_CLASS_ANNOTATION,
  INGRESS_CONTROLLER_NAME,
  matchRoute,
  ownedIngresses,
  pathMatches,
  requestHost,
  requestPath,
  tlsRuleFor,
  type PathRule,
  type RouteMatch,
} from './rules.ts';

const ingressClass = (name: string, controller: string, isDefault = false, created = '2024-01-01T00:00:00Z'): IngressClass => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IngressClass',
  metadata: { name, creationTimestamp: created, ...(isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
  spec: { controller },
});

const ingress = (name: string, spec: Ingress['spec'], extra: Partial<Ingress['metadata']> = {}): Ingress => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: 'default', creationTimestamp: '2024-01-01T00:00:00Z', ...extra },
  spec,
});

const to = (service: string, port = 80) => ({ service: { name: service, port: { number: port } } });
const rule = (host: string | undefined, paths: [string, string, string][]): IngressRule => ({
  ...(host !== undefined ? { host } : {}),
  http: { paths: paths.map(([path, pathType, service]) => ({ path, pathType, backend: to(service) })) },
});

const serviceOf = (match: RouteMatch): string | undefined =>
  match.type === 'matched' && match.target.type === 'service' ? match.target.service : match.type;

const OURS = ingressClass('logplane', INGRESS_CONTROLLER_NAME, true);

describe('path matching (the Ingress API examples)', () => {
  const single = (path: string, pathType: string, requested: string): boolean => {
    const table = buildRoutingTable([ingress('x', { ingressClassName: 'logplane', rules: [rule(undefined, [[path, pathType, 's']])] })], [OURS]);
    const rules = table.anyHost as PathRule[];
    return pathMatches(rules[0]!, requested);
  };
  it.each([
    ['Prefix', '/', '(all paths)', true],
    ['Exact', '/foo', '/foo', true],
    ['Exact', '/foo', '/bar', false],
    ['Exact', '/foo', '/foo/', false],
    ['Exact', '/foo/', '/foo', false],
    ['Prefix', '/foo', '/foo', true],
    ['Prefix', '/foo', '/foo/', true],
    ['Prefix', '/foo/', '/foo', true],
    ['Prefix', '/foo/', '/foo/', true],
    ['Prefix', '/aaa/bb', '/aaa/bbb', false],
    ['Prefix', '/aaa/bbb', '/aaa/bbb', true],
    ['Prefix', '/aaa/bbb/', '/aaa/bbb', true],
    ['Prefix', '/aaa/bbb', '/aaa/bbb/', true],
    ['Prefix', '/aaa/bbb', '/aaa/bbb/ccc', true],
    ['Prefix', '/aaa/bbb', '/aaa/bbbxyz', false],
    ['ImplementationSpecific', '/aaa/bbb', '/aaa/bbb/ccc', true],
    ['ImplementationSpecific', '/aaa/bbb', '/aaa/bbbxyz', false],
  ])('%s %s against %s: %s', (pathType, path, requested, expected) => {
    expect(single(path, pathType, requested === '(all paths)' ? '/any/thing' : requested)).toBe(expected);
  });
});

describe('host and path routing', () => {
  const table = buildRoutingTable(
    [
      ingress('a', {
        ingressClassName: 'logplane',
        rules: [
          rule('a.example', [['/', 'Prefix', 'a']]),
          rule('b.example', [['/api', 'Prefix', 'b-api'], ['/api/v2', 'Prefix', 'b-v2'], ['/api/v2', 'Exact', 'b-v2-exact']]),
          rule('*.wild.example', [['/', 'Prefix', 'wild']]),
          rule(undefined, [['/healthz', 'Exact', 'any']]),
        ],
      }),
    ],
    [OURS],
  );
  it.each([
    ['a.example', '/', 'a'],
    ['A.Example:8080', '/x/y', 'a'],
    ['a.example.', '/', 'a'],
    ['b.example', '/api', 'b-api'],
    ['b.example', '/api/users', 'b-api'],
    ['b.example', '/api/v2', 'b-v2-exact'],
    ['b.example', '/api/v2/x', 'b-v2'],
    ['b.example', '/apix', 'none'],
    ['b.example', '/', 'none'],
    ['x.wild.example', '/', 'wild'],
    ['wild.example', '/', 'none'],
    ['x.y.wild.example', '/', 'none'],
    ['other.example', '/healthz', 'any'],
    ['other.example', '/healthz/x', 'none'],
    // The exact host group is chosen; its paths do not fall through to the hostless rules.
    ['a.example', '/healthz', 'a'],
    ['b.example', '/healthz', 'none'],
  ])('Host %s path %s → %s', (host, path, expected) => {
    expect(serviceOf(matchRoute(table, host, path))).toBe(expected);
  });

  it('sends unmatched requests to the oldest defaultBackend, else none', () => {
    const withDefault = buildRoutingTable(
      [
        ingress('newer', { ingressClassName: 'logplane', defaultBackend: to('newer-default') }, { creationTimestamp: '2024-02-01T00:00:00Z' }),
        ingress('older', { ingressClassName: 'logplane', defaultBackend: to('older-default'), rules: [rule('a.example', [['/a', 'Exact', 'a']])] }),
      ],
      [OURS],
    );
    expect(serviceOf(matchRoute(withDefault, 'a.example', '/a'))).toBe('a');
    expect(serviceOf(matchRoute(withDefault, 'a.example', '/b'))).toBe('older-default');
    expect(serviceOf(matchRoute(withDefault, 'nowhere', '/'))).toBe('older-default');
  });

  it('prefers the older Ingress for the same host and path', () => {
    const twice = buildRoutingTable(
      [
        ingress('second', { ingressClassName: 'logplane', rules: [rule('a.example', [['/', 'Prefix', 'second']])] }, { creationTimestamp: '2024-03-01T00:00:00Z' }),
        ingress('first', { ingressClassName: 'logplane', rules: [rule('a.example', [['/', 'Prefix', 'first']])] }),
      ],
      [OURS],
    );
    expect(serviceOf(matchRoute(twice, 'a.example', '/'))).toBe('first');
  });

  it('resolves a named backend port and marks a resource backend unsupported', () => {
    const named = buildRoutingTable(
      [
        ingress('n', {
          ingressClassName: 'logplane',
          rules: [{ host: 'n.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { name: 'http' } } } }, { path: '/r', pathType: 'Prefix', backend: { resource: { kind: 'Bucket', name: 'b' } } }] } }],
        }),
      ],
      [OURS],
    );
    const match = matchRoute(named, 'n.example', '/');
    expect(match.type === 'matched' && match.target.type === 'service' && match.target.port).toEqual({ type: 'name', name: 'http' });
    const resource = matchRoute(named, 'n.example', '/r/x');
    expect(resource.type === 'matched' && resource.target.type).toBe('unsupported');
  });

  it.each([
    ['a.example:443', 'a.example'],
    ['[::1]:8080', '::1'],
    ['', ''],
    [undefined, ''],
  ])('request host of %s is %s', (header, expected) => {
    expect(requestHost(header)).toBe(expected);
  });
});

describe('request paths', () => {
  it.each([
    ['/api/users?x=1#f', '/api/users'],
    ['/api/../admin', '/admin'],
    ['/api/%2e%2e/admin', '/admin'],
    ['/a/./b/', '/a/b/'],
    ['//evil.example/x', '/evil.example/x'],
    ['http://b.example/api/x?y', '/api/x'],
    ['*', '/*'],
    [undefined, '/'],
  ])('%s routes as %s', (target, expected) => {
    expect(requestPath(target)).toBe(expected);
  });
});

describe('IngressClass selection', () => {
  const other = ingressClass('nginx', 'k8s.io/ingress-nginx');
  const cases: [string, IngressClass[], Ingress, boolean][] = [
    ['its class is ours', [OURS, other], ingress('x', { ingressClassName: 'logplane' }), true],
    ['its class is another controller’s', [OURS, other], ingress('x', { ingressClassName: 'nginx' }), false],
    ['its class does not exist', [OURS], ingress('x', { ingressClassName: 'missing' }), false],
    ['no class, ours is the default', [OURS, other], ingress('x', {}), true],
    ['no class, no default class', [ingressClass('logplane', INGRESS_CONTROLLER_NAME)], ingress('x', {}), false],
    ['no class, another default', [ingressClass('logplane', INGRESS_CONTROLLER_NAME), ingressClass('nginx', 'k8s.io/ingress-nginx', true)], ingress('x', {}), false],
    [
      'no class, the newest of two defaults is ours',
      [ingressClass('nginx', 'k8s.io/ingress-nginx', true, '2024-01-01T00:00:00Z'), ingressClass('logplane', INGRESS_CONTROLLER_NAME, true, '2024-06-01T00:00:00Z')],
      ingress('x', {}),
      true,
    ],
    ['the legacy annotation names our class', [ingressClass('logplane', INGRESS_CONTROLLER_NAME)], ingress('x', {}, { annotations: { 'kubernetes.io/ingress.class': 'logplane' } }), true],
    ['being deleted', [OURS], ingress('x', { ingressClassName: 'logplane' }, { deletionTimestamp: '2024-05-01T00:00:00Z' }), false],
  ];
  it.each(cases)('%s', (_title, classes, candidate, owned) => {
    expect(ownedIngresses([candidate], classes).length === 1).toBe(owned);
  });
});

describe('TLS certificate by SNI', () => {
  const table = buildRoutingTable(
    [
      ingress('t', {
        ingressClassName: 'logplane',
        tls: [
          { hosts: ['a.example'], secretName: 'a-cert' },
          { hosts: ['*.wild.example'], secretName: 'wild-cert' },
          { secretName: 'fallback-cert' },
          { hosts: ['no-secret.example'] },
        ],
      }),
    ],
    [OURS],
  );
  it.each([
    ['a.example', 'a-cert'],
    ['A.EXAMPLE', 'a-cert'],
    ['x.wild.example', 'wild-cert'],
    ['x.y.wild.example', 'fallback-cert'],
    ['other.example', 'fallback-cert'],
    ['no-secret.example', 'fallback-cert'],
    [undefined, 'fallback-cert'],
  ])('%s → %s', (servername, secret) => {
    expect(tlsRuleFor(table, servername)?.secretName).toBe(secret);
  });
  it('serves no certificate for an unknown name without a hostless TLS entry', () => {
    const strict = buildRoutingTable([ingress('t', { ingressClassName: 'logplane', tls: [{ hosts: ['a.example'], secretName: 'a-cert' }] })], [OURS]);
    expect(tlsRuleFor(strict, 'b.example')).toBeUndefined();
  });
});
