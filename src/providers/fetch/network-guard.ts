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
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['ff00::', 8], // multicast
  ['64:ff9b:1::', 48], // local-use NAT64: translates to whatever the local network decides
  ['100::', 64], // discard-only
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

/** The 16 bytes of an IPv6 address (`::` expanded, a trailing dotted IPv4 part read as 4 bytes). */
export function ipv6Bytes(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return null;
  return groups.flatMap((group) => {
    const value = Number.parseInt(group || '0', 16);
    return [value >> 8, value & 0xff];
  });
}

/**
 * The IPv4 addresses an IPv6 address carries, which is where its packets really go: IPv4-mapped
 * (`::ffff:10.0.0.1`), IPv4-translated (`::ffff:0:10.0.0.1`, SIIT), IPv4-compatible (`::10.0.0.1`),
 * NAT64 (`64:ff9b::10.0.0.1`), 6to4
 * (`2002:0a00:0001::`) and Teredo (server, and client with its bits inverted).
 */
export function embeddedIpv4(address: string): string[] {
  const bytes = ipv6Bytes(address);
  if (!bytes) return [];
  const ipv4 = (from: number, invert = false) =>
    bytes
      .slice(from, from + 4)
      .map((byte) => (invert ? byte ^ 0xff : byte))
      .join('.');
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return [ipv4(12)];
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return [ipv4(12)];
  if (zero(0, 12)) return [ipv4(12)];
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12))
    return [ipv4(12)];
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return [ipv4(2)];
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && zero(2, 4)) return [ipv4(4), ipv4(12, true)];
  return [];
}

export class BlockedAddressError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `Refusing to fetch ${host}: it resolves to ${address}, a loopback, private, link-local or metadata address. Allow it explicitly (QUARRY_FETCH_ALLOW) if this is intended.`,
    );
    this.name = 'BlockedAddressError';
  }
}

/** Checks one resolved address for a host; throws `BlockedAddressError`. */
export function checkAddress(host: string, address: string, policy: NetworkPolicy): void {
  const allowed = allowList(policy);
  if (allowed.hosts.has(host.toLowerCase())) return;
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const carried = family === 'ipv6' ? embeddedIpv4(address) : [];
  if (allowed.list.check(address, family)) return;
  if (carried.length > 0 && carried.every((ipv4) => allowed.list.check(ipv4, 'ipv4'))) return;
  if (blocked.check(address, family) || carried.some((ipv4) => blocked.check(ipv4, 'ipv4')))
    throw new BlockedAddressError(host, address);
}

/**
 * A `lookup` for `http.request` that refuses blocked addresses. The check runs on the address the
 * socket is about to connect to, so a DNS answer that changes between check and connect cannot
 * slip through.
 */
export function guardedLookup(policy: NetworkPolicy) {
  return (
    hostname: string,
    options: object,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
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
