import { describe, expect, it } from 'vitest';
import { BlockedAddressError, checkAddress, embeddedIpv4, ipv6Bytes } from './network-guard.ts';

const refused = (address: string, allow: string[] = []) => {
  try {
    checkAddress('example.org', address, { allow });
    return false;
  } catch (error) {
    if (error instanceof BlockedAddressError) return true;
    throw error;
  }
};

describe('network guard', () => {
  it('reads IPv6 addresses, with a trailing dotted part', () => {
    expect(ipv6Bytes('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(ipv6Bytes('::ffff:10.1.2.3')!.slice(10)).toEqual([0xff, 0xff, 10, 1, 2, 3]);
    expect(ipv6Bytes('2001:db8::8a2e:370:7334')!.slice(0, 4)).toEqual([0x20, 0x01, 0x0d, 0xb8]);
    expect(ipv6Bytes('10.0.0.1')).toBeNull();
  });

  it('finds the IPv4 address inside mapped, compatible, NAT64, 6to4 and Teredo addresses', () => {
    expect(embeddedIpv4('::ffff:a01:203')).toEqual(['10.1.2.3']);
    expect(embeddedIpv4('::10.1.2.3')).toEqual(['10.1.2.3']);
    expect(embeddedIpv4('64:ff9b::c0a8:101')).toEqual(['192.168.1.1']);
    expect(embeddedIpv4('2002:7f00:1::')).toEqual(['127.0.0.1']);
    // Teredo: server 65.54.227.120, client 127.0.0.1 with its bits inverted.
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:80ff:fffe')).toEqual(['65.54.227.120', '127.0.0.1']);
    expect(embeddedIpv4('2606:4700::1111')).toEqual([]);
  });

  it('refuses private addresses however they are written, and allows public ones', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:0:7f00:1', // IPv4-translated (issue 34)
      '::ffff:0:a9fe:a9fe',
      '::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::8.8.8.8',
      '2002:c0a8:101::1',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      'fec0::1',
      'fd00:ec2::254',
      'fe80::1',
    ])
      expect(refused(address), address).toBe(true);
    for (const address of ['93.184.216.34', '2606:4700::1111', '64:ff9b::5db8:d822', '2002:5db8:d822::1'])
      expect(refused(address), address).toBe(false);
    expect(refused('::ffff:10.1.2.3', ['10.1.0.0/16'])).toBe(false);
  });
});
