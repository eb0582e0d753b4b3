import { describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { ApiError } from '../errors.ts';
import { route } from '../router.ts';
import { agentPath, connectTarget } from './connect.ts';

const pod = (overrides: { containers?: string[]; phase?: string; nodeName?: string | null; waiting?: boolean } = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: {
      ...(overrides.nodeName === null ? {} : { nodeName: overrides.nodeName ?? 'node-1' }),
      containers: (overrides.containers ?? ['main']).map((name) => ({ name, image: 'busybox' })),
      initContainers: [{ name: 'setup', image: 'busybox' }],
    },
    status: {
      phase: overrides.phase ?? 'Running',
      containerStatuses: (overrides.containers ?? ['main']).map((name) => ({ name, state: overrides.waiting ? { waiting: { reason: 'CrashLoopBackOff' } } : { running: {} } })),
    },
  }) as unknown as Pod;

const refusal = (f: () => unknown): { code: number; message: string } => {
  try {
    f();
  } catch (error) {
    if (error instanceof ApiError) return { code: error.status.code, message: error.status.message ?? "" };
    throw error;
  }
  throw new Error('not refused');
};

describe('connect subresources', () => {
  it('routes pods/NAME/exec|attach|portforward only', () => {
    expect(connectTarget(route('/api/v1/namespaces/a/pods/web/exec'))).toEqual({ namespace: 'a', name: 'web', subresource: 'exec' });
    expect(connectTarget(route('/api/v1/namespaces/a/pods/web/portforward'))).toEqual({ namespace: 'a', name: 'web', subresource: 'portforward' });
    expect(connectTarget(route('/api/v1/namespaces/a/pods/web/log'))).toBeUndefined();
    expect(connectTarget(route('/api/v1/namespaces/a/pods'))).toBeUndefined();
  });

  it('builds kubelet\'s path on the pod\'s node, passing the command and stream flags only', () => {
    const query = new URLSearchParams('command=sh&command=-c&command=echo a/b&stdin=true&stdout=true&tty=true&container=main&extra=x');
    expect(agentPath(pod(), 'exec', query)).toBe('/exec/node-1/team-a/web/main?command=sh&command=-c&command=echo+a%2Fb&stdin=true&stdout=true&stderr=false&tty=true');
    expect(agentPath(pod(), 'attach', new URLSearchParams('stdout=1'))).toBe('/attach/node-1/team-a/web/main?stdin=false&stdout=true&stderr=false&tty=false');
    expect(agentPath(pod(), 'portforward', new URLSearchParams('ports=8080,9090'))).toBe('/portForward/node-1/team-a/web');
  });

  it.each([
    [{}, 'exec', 'command=ls&stdout=1&container=nope', 'container nope is not valid for pod web'],
    [{}, 'exec', 'command=ls&stdout=1&container=setup', 'container setup is an init container of pod web'],
    [{ containers: ['a', 'b'] }, 'exec', 'command=ls&stdout=1', 'a container name must be specified for pod web, choose one of: [a b]'],
    [{ phase: 'Succeeded' }, 'exec', 'command=ls&stdout=1', 'cannot exec into a container in a completed pod; current phase is Succeeded'],
    [{ phase: 'Pending' }, 'attach', 'stdout=1', 'pod web is not running (phase Pending)'],
    [{ waiting: true }, 'exec', 'command=ls&stdout=1', 'container main in pod web is not running'],
    [{ nodeName: null }, 'exec', 'command=ls&stdout=1', 'pod web does not have a host assigned'],
    [{}, 'exec', 'stdout=1', 'command: Required value'],
    [{}, 'exec', 'command=ls', 'you must specify at least 1 of stdin, stdout, stderr'],
    [{}, 'portforward', 'ports=0', 'ports: Invalid value: "0"'],
    [{}, 'portforward', 'ports=http', 'ports: Invalid value: "http"'],
  ] as const)('refuses %j %s?%s with 400', (overrides, subresource, query, message) => {
    const refused = refusal(() => agentPath(pod(overrides as Parameters<typeof pod>[0]), subresource, new URLSearchParams(query)));
    expect(refused.code).toBe(400);
    expect(refused.message).toContain(message);
  });
});
