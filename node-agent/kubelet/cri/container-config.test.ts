import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../schemas/index.ts';
import { criMounts, generateContainerConfig } from './container-config.ts';
import { managedHostsFile } from './etc-hosts.ts';

const pod = (spec: Partial<Pod['spec']> = {}, name = 'web'): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', uid: 'u1' }, spec: { containers: [{ name: 'app' }], ...spec } });

describe('generateContainerConfig (kuberuntime)', () => {
  it('passes the variables in order and expands $(VAR) in command and args against them', () => {
    const config = generateContainerConfig({
      spec: { name: 'app', image: 'local/busybox:1', command: ['sh', '-c', 'echo $(GREETING) $(UNKNOWN) $$(GREETING)'], args: ['$(NAME)'] },
      uid: 'u1',
      restartCount: 2,
      env: [['GREETING', 'hi'], ['NAME', 'web']],
      mounts: [],
      linux: {},
    });
    expect(config).toMatchObject({
      metadata: { name: 'app', attempt: 2 },
      command: ['sh', '-c', 'echo hi $(UNKNOWN) $(GREETING)'],
      args: ['web'],
      envs: [{ key: 'GREETING', value: 'hi' }, { key: 'NAME', value: 'web' }],
      logPath: 'app/2.log',
    });
  });

  it('leaves the image\'s entrypoint and cmd when the container sets no command or args', () => {
    const config = generateContainerConfig({ spec: { name: 'app', image: 'x' }, uid: 'u1', restartCount: 0, env: [], mounts: [], linux: {} });
    expect(config.command).toBeUndefined();
    expect(config.args).toBeUndefined();
  });
});

describe('criMounts (makeMounts)', () => {
  it('maps each mount to a CRI Mount with its propagation, never relabelled', () => {
    expect(
      criMounts([
        { volume: 'a', hostPath: '/v/a', containerPath: '/a', readOnly: true, propagation: 'None' },
        { volume: 'b', hostPath: '/v/b', containerPath: '/b', readOnly: false, propagation: 'HostToContainer' },
        { volume: 'c', hostPath: '/v/c', containerPath: '/c', readOnly: false, propagation: 'Bidirectional' },
      ]),
    ).toEqual([
      { containerPath: '/a', hostPath: '/v/a', readonly: true, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' },
      { containerPath: '/b', hostPath: '/v/b', readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_HOST_TO_CONTAINER' },
      { containerPath: '/c', hostPath: '/v/c', readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_BIDIRECTIONAL' },
    ]);
  });
});

describe('managedHostsFile (kubelet managedHostsFileContent)', () => {
  const header = '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
  it.each([
    ['the pod name', pod(), `${header}10.0.0.5\tweb\n`],
    ['hostname and subdomain as FQDN', pod({ hostname: 'db-0', subdomain: 'db' }), `${header}10.0.0.5\tdb-0.db.shop.svc.cluster.local\tdb-0\n`],
    ['a name cut to 63 characters, trailing dashes dropped', pod({}, `${'a'.repeat(62)}-b`), `${header}10.0.0.5\t${'a'.repeat(62)}\n`],
    [
      'hostAliases',
      pod({ hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.remote', 'bar.remote'] }] }),
      `${header}10.0.0.5\tweb\n\n# Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote\n`,
    ],
  ])('%s', (_what, input, expected) => {
    expect(managedHostsFile(input, ['10.0.0.5'], 'cluster.local')).toBe(expected);
  });
});
