/**
 * The pod's `/etc/hosts` as kubelet 1.32 manages it (`makeHostsMount`, `ensureHostsFile`,
 * `managedHostsFileContent` in `pkg/kubelet/kubelet_pods.go`): the localhost lines, the pod's
 * address with its hostname (and FQDN with a `subdomain`), then `hostAliases`. Written for
 * each container start (so it follows the pod's address), 0644, and bind-mounted read-write
 * into every container that does not mount something of its own at /etc/hosts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../../schemas/index.ts';
import type { CriMount } from './client.ts';

const ETC_HOSTS = '/etc/hosts';

/** `GeneratePodHostNameAndDomain`: `spec.hostname` or the pod's name (cut to 63 characters), and `<subdomain>.<ns>.svc.<domain>` with a subdomain. */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { readonly hostname: string; readonly domain: string } {
  const wanted = pod.spec.hostname || pod.metadata.name;
  const hostname = wanted.length > 63 ? wanted.slice(0, 63).replace(/[-.]+$/, '') : wanted;
  const subdomain = pod.spec.subdomain ?? '';
  return { hostname, domain: subdomain === '' ? '' : `${subdomain}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` };
}

/** `managedHostsFileContent`. */
export function managedHostsFile(pod: Pod, podIPs: readonly string[], clusterDomain: string): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  let text = '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
  for (const ip of podIPs) text += domain === '' ? `${ip}\t${hostname}\n` : `${ip}\t${hostname}.${domain}\t${hostname}\n`;
  const aliases = pod.spec.hostAliases ?? [];
  if (aliases.length > 0) {
    text += '\n# Entries added by HostAliases.\n';
    for (const alias of aliases) text += `${alias.ip}\t${(alias.hostnames ?? []).join('\t')}\n`;
  }
  return text;
}

/**
 * Writes the pod's hosts file into `podDir` and returns its mount, or nothing when the pod
 * has no address yet or the container mounts its own /etc/hosts (kubelet's condition).
 */
export function etcHostsMount(input: { readonly pod: Pod; readonly podIPs: readonly string[]; readonly clusterDomain: string; readonly podDir: string; readonly containerPaths: readonly string[] }): CriMount | undefined {
  if (input.podIPs.length === 0 || input.containerPaths.includes(ETC_HOSTS)) return undefined;
  mkdirSync(input.podDir, { recursive: true, mode: 0o755 });
  const file = join(input.podDir, 'etc-hosts');
  writeFileSync(file, managedHostsFile(input.pod, input.podIPs, input.clusterDomain), { mode: 0o644 });
  return { containerPath: ETC_HOSTS, hostPath: file, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' };
}
