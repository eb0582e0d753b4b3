/**
 * Pod IP allocation from a loopback CIDR (default 127.100.0.0/16).
 *
 * Linux routes all of 127.0.0.0/8 to `lo`, so every address in the range is bindable
 * without root. The address of a pod is a pure function of its uid and the addresses
 * already taken (hash, then linear probing), so it is deterministic; the caller persists
 * what it allocated so an agent restart keeps every pod's address.
 */
import { KubeletConfigError, PodIPExhaustedError } from './errors.ts';

/** A parsed IPv4 CIDR. `base` is the network address as an unsigned 32-bit number. */
export interface PodCidr {
  readonly text: string;
  readonly base: number;
  readonly prefix: number;
  /** Number of usable host addresses (network and broadcast addresses excluded). */
  readonly hosts: number;
}

/** Default pod CIDR of the process runtime. */
export const DEFAULT_POD_CIDR = '127.100.0.0/16';

/** Parses `a.b.c.d/n`; it must lie inside 127.0.0.0/8 and leave at least 2 host addresses. */
export function parsePodCidr(text: string): PodCidr {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text.trim());
  const octets = match?.slice(1, 5).map(Number) ?? [];
  const prefix = Number(match?.[5]);
  if (match === null || octets.some((o) => o > 255) || !(prefix >= 8 && prefix <= 30)) {
    throw new KubeletConfigError(`pod CIDR "${text}" is not an IPv4 CIDR with a prefix length between 8 and 30`, { podCIDR: text });
  }
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  const base = address - (address % size);
  if (Math.floor(base / 2 ** 24) !== 127) {
    throw new KubeletConfigError(`pod CIDR "${text}" must lie inside 127.0.0.0/8 (loopback addresses, bindable without root)`, { podCIDR: text });
  }
  return { text, base, prefix, hosts: size - 2 };
}

/** Dotted-quad text of an unsigned 32-bit address. */
export function formatIPv4(address: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join('.');
}

/** FNV-1a (32 bit) of a string: a stable, well-spread starting point for probing. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * The address for pod `uid`: the first free one at or after `hash(uid)` in the CIDR's host
 * range. Throws {@link PodIPExhaustedError} when every address is taken.
 */
export function allocatePodIP(cidr: PodCidr, uid: string, taken: ReadonlySet<string>): string {
  const start = fnv1a(uid) % cidr.hosts;
  for (let i = 0; i < cidr.hosts; i++) {
    const ip = formatIPv4(cidr.base + 1 + ((start + i) % cidr.hosts));
    if (!taken.has(ip)) return ip;
  }
  throw new PodIPExhaustedError(cidr.text, { uid });
}
