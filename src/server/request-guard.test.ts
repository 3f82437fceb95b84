import { describe, expect, it } from 'vitest';
import { allowedHostNames, hostName, isLoopback } from './request-guard.ts';

describe('addresses a server judges', () => {
  it('calls loopback only what parses as loopback, never by prefix', () => {
    for (const host of ['localhost', '127.0.0.1', '127.9.9.9', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ['127.0.0.1.nip.io', 'localhost.evil.example', '0.0.0.0', '::', '10.0.0.1', '1270.0.0.1'])
      expect(isLoopback(host), host).toBe(false);
  });

  it('names the hosts a request may address', () => {
    expect(hostName('[::1]:7777')).toBe('::1');
    expect(hostName('Example.org:80')).toBe('example.org');
    expect([...allowedHostNames('0.0.0.0', ['research.example.org'])].sort()).toEqual([
      'localhost',
      'research.example.org',
    ]);
    expect(allowedHostNames('quarry.lan', [])).toContain('quarry.lan');
  });
});
