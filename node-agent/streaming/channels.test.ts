import { describe, expect, it } from 'vitest';
import { CHANNEL_PROTOCOLS, decodeClientMessage, encodeChannelMessage, negotiate, outcomeStatus, parseResize } from './channels.ts';
import { parseStreamRequest } from './request.ts';

describe('the v5/v4 channel protocol', () => {
  it.each([
    [[0, 104, 105], 'v5.channel.k8s.io', { type: 'stdin', data: Buffer.from('hi') }],
    [[255, 0], 'v5.channel.k8s.io', { type: 'close', channel: 0 }],
    [[255, 0], 'v4.channel.k8s.io', { type: 'ignored', reason: 'close signal before v5' }],
    [[255], 'v5.channel.k8s.io', { type: 'ignored', reason: 'malformed close signal' }],
    [[4, ...Buffer.from('{"Width":120,"Height":40}')], 'v5.channel.k8s.io', { type: 'resize', width: 120, height: 40 }],
    [[4, ...Buffer.from('{"Width":-1,"Height":40}')], 'v5.channel.k8s.io', { type: 'ignored', reason: 'malformed resize message' }],
    [[1, 1], 'v5.channel.k8s.io', { type: 'ignored', reason: 'channel 1 is not written by clients' }],
    [[], 'v5.channel.k8s.io', { type: 'ignored', reason: 'empty message' }],
  ] as const)('decodes %j under %s', (bytes, protocol, expected) => {
    expect(decodeClientMessage(Buffer.from(bytes), protocol)).toEqual(expected);
  });

  it('reads resize JSON defensively', () => {
    expect(parseResize(Buffer.from('{"Width":80,"Height":24,"extra":1}'))).toEqual({ width: 80, height: 24 });
    expect(parseResize(Buffer.from('{"Width":70000,"Height":24}'))).toBeUndefined();
    expect(parseResize(Buffer.from('not json'))).toBeUndefined();
    expect(parseResize(Buffer.from('null'))).toBeUndefined();
    expect(parseResize(Buffer.from(`{"Width":1,"Height":1,"pad":"${'x'.repeat(300)}"}`))).toBeUndefined();
  });

  it('prefixes messages with their channel', () => {
    expect([...encodeChannelMessage(1, Buffer.from('ok'))]).toEqual([1, 111, 107]);
    expect([...encodeChannelMessage(3)]).toEqual([3]);
  });

  it('reports a non-zero exit as kube\'s NonZeroExitCode Status, which kubectl turns into its exit code', () => {
    expect(outcomeStatus({ type: 'exited', exitCode: 0 }, ['true'])).toEqual({ metadata: {}, status: 'Success' });
    expect(outcomeStatus({ type: 'exited', exitCode: 3 }, ['sh', '-c', 'exit 3'])).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(outcomeStatus({ type: 'failed', message: 'boom' }, [])).toEqual({ metadata: {}, status: 'Failure', message: 'boom' });
  });

  it('negotiates the first offered subprotocol the server has', () => {
    expect(negotiate(['v5.channel.k8s.io', 'v4.channel.k8s.io'], CHANNEL_PROTOCOLS)).toBe('v5.channel.k8s.io');
    expect(negotiate(['v4.channel.k8s.io', 'v5.channel.k8s.io'], CHANNEL_PROTOCOLS)).toBe('v4.channel.k8s.io');
    expect(negotiate(['channel.k8s.io', 'base64.channel.k8s.io'], CHANNEL_PROTOCOLS)).toBeUndefined();
  });
});

describe('the agent\'s streaming paths', () => {
  it('parses exec, attach and portForward', () => {
    expect(parseStreamRequest('/exec/n1/default/web/main?command=sh&command=-c&command=echo%20hi&stdout=true&stderr=1')).toEqual({
      type: 'exec',
      node: 'n1',
      namespace: 'default',
      pod: 'web',
      container: 'main',
      command: ['sh', '-c', 'echo hi'],
      options: { stdin: false, stdout: true, stderr: true, tty: false },
    });
    expect(parseStreamRequest('/attach/n1/default/web/main?stdin=true&tty=true&stdout=true')).toMatchObject({ type: 'attach', options: { stdin: true, tty: true } });
    expect(parseStreamRequest('/portForward/n1/default/web')).toEqual({ type: 'portForward', node: 'n1', namespace: 'default', pod: 'web' });
  });

  it.each([
    ['/exec/n1/default/web/main?stdout=true', 400, /at least one command/],
    ['/exec/n1/default/web/main?command=ls', 400, /at least 1 of stdin, stdout, stderr/],
    ['/exec/n1/default/web/main?command=ls&stdout=1&stderr=1&tty=1', 400, /tty and stderr/],
    ['/exec/n1/default/web/main?command=ls&stdout=maybe', 400, /stdout: invalid value "maybe"/],
    ['/exec/n1/default/web/main?command=a%00b&stdout=1', 400, /NUL/],
    ['/exec/n1/Default/web/main?command=ls&stdout=1', 400, /invalid namespace/],
    ['/exec/n1/default/web/%E0%A4%A?command=ls', 400, /malformed %-escape/],
    ['/exec/n1/default/web', 404, /no such path/],
    ['/portForward/n1/default/web/extra', 404, /no such path/],
    ['/run/n1/default/web/main', 404, /no such path/],
  ])('refuses %s with %i', (url, status, message) => {
    const parsed = parseStreamRequest(url);
    expect(parsed).toMatchObject({ type: 'rejected', status });
    expect((parsed as { message: string }).message).toMatch(message);
  });

  it('bounds the command', () => {
    const many = Array.from({ length: 1025 }, () => 'command=x').join('&');
    expect(parseStreamRequest(`/exec/n1/default/web/main?${many}&stdout=1`)).toMatchObject({ type: 'rejected', status: 400, message: expect.stringMatching(/Too long/) });
  });
});
