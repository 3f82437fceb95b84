import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { throughProxy } from './auth.ts';
import { hostName } from './request-guard.ts';

/** Peers that are on this machine or a private network: a compose network, a cluster, a LAN. */
const privatePeers = new BlockList();
for (const [network, prefix] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  privatePeers.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privatePeers.addSubnet(network, prefix, 'ipv6');

function isPrivatePeer(address: string): boolean {
  const plain = address.replace(/^::ffff:/, '');
  const family = isIP(plain);
  return family !== 0 && privatePeers.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** What a `/metrics` request is judged on. */
export interface MetricsRequest {
  authorization: string | undefined;
  headers: Headers;
  /** The connection's address; null when unknown (refused without a token). */
  peer: string | null;
}

export interface MetricsPolicy {
  /** `QUARRY_METRICS_TOKEN`: when set, the only way in. */
  token: string | null;
  /** The names users reach the server by (`QUARRY_PUBLIC_URL`, `QUARRY_PUBLIC_NAMES`): the public path. */
  publicNames: ReadonlySet<string>;
}

export type MetricsRefusal = { status: 401 | 403; message: string };

/**
 * Who may read `/metrics`. With `QUARRY_METRICS_TOKEN` set, whoever sends it as a bearer token, from
 * anywhere. Without one, only a scraper that is plainly off the public path: a peer on this machine
 * or a private network, reaching the server directly (no proxy header of any kind) by a name that is
 * not one of its public names. The counts hold no user data, but they say how busy a server is and
 * which version it runs; a stranger on the internet has no business reading them.
 */
export function metricsRefusal(request: MetricsRequest, policy: MetricsPolicy): MetricsRefusal | null {
  if (policy.token !== null) {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '')?.[1];
    if (given !== undefined && sameSecret(given, policy.token)) return null;
    return { status: 401, message: 'Metrics need the bearer token set in QUARRY_METRICS_TOKEN.' };
  }
  const host = hostName(request.headers.get('host') ?? '');
  if (
    request.peer === null ||
    !isPrivatePeer(request.peer) ||
    throughProxy(request.headers) ||
    policy.publicNames.has(host)
  )
    return {
      status: 403,
      message:
        'Metrics are served off the public path only: scrape this server directly from its own network, or set QUARRY_METRICS_TOKEN and send it as a bearer token.',
    };
  return null;
}
