import { describe, expect, it } from 'vitest';
import { MAX_TAIL_LINES, parseLogRequest } from './log-server.ts';

const LOGS = '/containerLogs/node-1/default/web-0/main';

describe('parseLogRequest', () => {
  it('reads the node, pod, container and options of a well-formed request', () => {
    expect(parseLogRequest('GET', `${LOGS}?follow=true&previous=false&tailLines=10&limitBytes=4096`)).toEqual({
      type: 'logs',
      node: 'node-1',
      namespace: 'default',
      pod: 'web-0',
      container: 'main',
      follow: true,
      previous: false,
      tailLines: 10,
      limitBytes: 4096,
    });
    expect(parseLogRequest('GET', `/containerLogs/node-1/kube-system/coredns.v1/dns`)).toMatchObject({ type: 'logs', pod: 'coredns.v1', follow: false });
    expect(parseLogRequest('GET', `${LOGS}?tailLines=0&follow=1&previous=F`)).toMatchObject({ tailLines: 0, follow: true, previous: false });
    expect(parseLogRequest('GET', `${LOGS}?tailLines=${MAX_TAIL_LINES}`)).toMatchObject({ tailLines: MAX_TAIL_LINES });
    expect(parseLogRequest('GET', `/containerLogs/node%2D1/default/web-0/main`)).toMatchObject({ type: 'logs', node: 'node-1' });
    expect(parseLogRequest('GET', '/resourceUsage/node-1')).toEqual({ type: 'resourceUsage', node: 'node-1' });
    expect(parseLogRequest('GET', '/metrics')).toEqual({ type: 'metrics' });
  });

  it.each([
    ['a bad %-escape (the request that killed the agent)', 'GET', '/containerLogs/%E0%A4%A', 400, /malformed %-escape/],
    ['a truncated %-escape in the container', 'GET', `/containerLogs/node-1/default/web-0/%`, 400, /malformed %-escape/],
    ['another method', 'POST', LOGS, 405, /GET only/],
    ['no method', undefined, LOGS, 405, /GET only/],
    ['another path', 'GET', '/pods', 404, /no such path/],
    ['the root', 'GET', '/', 404, /no such path/],
    ['a path with no container', 'GET', '/containerLogs/node-1/default/web-0', 404, /no such path/],
    ['a path one segment too long', 'GET', `${LOGS}/x`, 404, /no such path/],
    ['a protocol-relative URL', 'GET', '//evil.example/containerLogs/a/b/c/d', 404, /no such path/],
    ['a namespace that walks up', 'GET', '/containerLogs/node-1/..%2F..%2Fetc/web-0/main', 400, /invalid namespace/],
    ['a container that walks up', 'GET', '/containerLogs/node-1/default/web-0/..%2F..%2F..', 400, /invalid container name/],
    ['an upper-case pod name', 'GET', '/containerLogs/node-1/default/Web/main', 400, /invalid pod name/],
    ['an empty node name', 'GET', '/containerLogs//default/web-0/main', 400, /invalid node name/],
    ['a negative tailLines', 'GET', `${LOGS}?tailLines=-1`, 400, /tailLines: invalid value "-1"/],
    ['a tailLines that is no number', 'GET', `${LOGS}?tailLines=abc`, 400, /tailLines/],
    ['a tailLines in exponent notation', 'GET', `${LOGS}?tailLines=1e3`, 400, /tailLines/],
    ['a fractional tailLines', 'GET', `${LOGS}?tailLines=1.5`, 400, /tailLines/],
    ['an absurdly large tailLines', 'GET', `${LOGS}?tailLines=99999999999999999999999`, 400, /tailLines/],
    ['a tailLines past the maximum', 'GET', `${LOGS}?tailLines=${MAX_TAIL_LINES + 1}`, 400, /tailLines/],
    ['a zero limitBytes', 'GET', `${LOGS}?limitBytes=0`, 400, /limitBytes/],
    ['a follow that is no boolean', 'GET', `${LOGS}?follow=yes`, 400, /follow: invalid value "yes"/],
    ['a previous that is no boolean', 'GET', `${LOGS}?previous=%E0`, 400, /previous/],
    ['a write to the resource usage', 'PUT', '/resourceUsage/node-1', 405, /GET only/],
    ['a resource usage of a node that walks up', 'GET', '/resourceUsage/..', 400, /invalid node name/],
    ['a resource usage with a pod in the path', 'GET', '/resourceUsage/node-1/default', 404, /no such path/],
    ['a write to the metrics', 'POST', '/metrics', 405, /GET only/],
    ['a metrics path kubelet has and the agent has not', 'GET', '/metrics/cadvisor', 404, /no such path/],
  ] as const)('answers %s with %i', (_, method, url, status, message) => {
    const parsed = parseLogRequest(method, url);
    expect(parsed).toMatchObject({ type: 'rejected', status });
    expect(parsed.type === 'rejected' ? parsed.message : '').toMatch(message);
  });
});
