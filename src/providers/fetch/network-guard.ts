import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Address ranges a research fetch never reaches unless allowed: this machine, private networks, cloud metadata. */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including 169.254.169.254 (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}
blocked.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6

export interface NetworkPolicy {
  /**
   * Hosts, addresses or CIDR ranges fetches may reach even though they are private
   * (`localhost`, `127.0.0.1`, `10.1.0.0/16`); for tests and self-hosted services.
   */
  allow?: string[];
}

function allowList(policy: NetworkPolicy): { hosts: Set<string>; list: BlockList } {
  const hosts = new Set<string>();
  const list = new BlockList();
  for (const entry of policy.allow ?? []) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address ?? '');
    if (family && prefix !== undefined) list.addSubnet(address!, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    else if (family) list.addAddress(address!, family === 4 ? 'ipv4' : 'ipv6');
    else hosts.add(entry.toLowerCase());
  }
  return { hosts, list };
}

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address it carries. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export class BlockedAddressError extends Error {
  constructor(readonly host: string, readonly address: string) {
    super(`Refusing to fetch ${host}: it resolves to ${address}, a loopback, private, link-local or metadata address. Allow it explicitly (QUARRY_FETCH_ALLOW) if this is intended.`);
    this.name = 'BlockedAddressError';
  }
}

/** Checks one resolved address for a host; throws `BlockedAddressError`. */
export function checkAddress(host: string, address: string, policy: NetworkPolicy): void {
  const allowed = allowList(policy);
  if (allowed.hosts.has(host.toLowerCase())) return;
  const plain = unmapped(address);
  if (allowed.list.check(plain.address, plain.family)) return;
  if (blocked.check(plain.address, plain.family)) throw new BlockedAddressError(host, address);
}

/**
 * A `lookup` for `http.request` that refuses blocked addresses. The check runs on the address the
 * socket is about to connect to, so a DNS answer that changes between check and connect cannot
 * slip through.
 */
export function guardedLookup(policy: NetworkPolicy) {
  return (hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      try {
        for (const entry of addresses) checkAddress(hostname, entry.address, policy);
      } catch (blockedError) {
        return callback(blockedError as Error, '', 0);
      }
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}
