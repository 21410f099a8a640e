import { describe, expect, it } from 'vitest';
import { addressKind, EgressPolicy } from '../../runtime/egress/egress-policy.js';
import { loadConfig } from '../../runtime/server/config.js';

describe('addressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    // IPv4 inside IPv6 is the IPv4 address it reaches.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['::ffff:0:0', 'unspecified'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(addressKind(address)).toBeUndefined();
    },
  );
});

describe('EgressPolicy', () => {
  it('refuses every address that is not public by default, saying why', () => {
    const policy = EgressPolicy.DEFAULT;
    expect(policy.refusal('8.8.8.8', '8.8.8.8')).toBeUndefined();
    expect(policy.refusal('127.0.0.1', '127.0.0.1')).toBe(
      '127.0.0.1 is a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow',
    );
    expect(policy.refusal('localhost', '::1')).toBe(
      'localhost resolves to ::1, a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow',
    );
    expect(policy.refusal('0.0.0.0', '0.0.0.0')).toBe(
      '0.0.0.0 is an unspecified address, which GRAPHIR_EGRESS_ALLOW does not allow',
    );
    expect(policy.refusal('169.254.169.254', '169.254.169.254')).toContain(
      'a cloud metadata address',
    );
    expect(policy.allowsHost('localhost')).toBe(false);
  });

  it('allows the addresses, networks and hosts listed, separated by commas or spaces', () => {
    const policy = EgressPolicy.parse(
      ' 127.0.0.1, 10.0.0.0/8  fd00::/8,[::1] Internal.Example.org., 169.254.169.254/32',
    );
    expect(policy.refusal('x', '127.0.0.1')).toBeUndefined();
    expect(policy.refusal('x', '::ffff:127.0.0.1')).toBeUndefined();
    expect(policy.refusal('x', '127.0.0.2')).toContain('loopback');
    expect(policy.refusal('x', '10.200.3.4')).toBeUndefined();
    expect(policy.refusal('x', '192.168.0.1')).toContain('private');
    expect(policy.refusal('x', 'fd12::1')).toBeUndefined();
    expect(policy.refusal('x', '::1')).toBeUndefined();
    expect(policy.refusal('x', '169.254.169.254')).toBeUndefined();
    expect(policy.allowsHost('internal.example.org')).toBe(true);
    expect(policy.allowsHost('INTERNAL.example.org.')).toBe(true);
    expect(policy.allowsHost('example.org')).toBe(false);
    expect(EgressPolicy.parse('').refusal('x', '127.0.0.1')).toContain('loopback');
  });

  it('allows everything with 0.0.0.0/0 and ::/0', () => {
    const policy = EgressPolicy.parse('0.0.0.0/0 ::/0');
    for (const address of ['127.0.0.1', '169.254.169.254', '::1', 'fe80::1'])
      expect(policy.refusal('x', address)).toBeUndefined();
  });

  it.each([
    ['10.0.0.0/33', '"10.0.0.0/33" is not a CIDR network'],
    ['fd00::/129', 'a number from 0 to 128'],
    ['10.0.0.0/8/1', 'is not a CIDR network'],
    ['10.0.0.0/x', 'is not a CIDR network'],
    ['http://example.org', 'write hosts without scheme, port or path'],
    ['example.org:8080', 'neither a host name'],
    ['*.example.org', 'neither a host name'],
    ['127.1', '"127.1" is not an IP address'],
    ['a..b', 'neither a host name'],
  ])('refuses %s', (text, problem) => {
    expect(() => EgressPolicy.parse(text)).toThrow(problem);
    expect(() => EgressPolicy.parse(text)).toThrow(
      `GRAPHIR_EGRESS_ALLOW must list host names, IP addresses and CIDR networks`,
    );
  });

  it('is read from the environment at start-up, and a bad value stops it', () => {
    expect(loadConfig({}).egress).toBe(EgressPolicy.DEFAULT);
    expect(
      loadConfig({ GRAPHIR_EGRESS_ALLOW: '127.0.0.1' }).egress.refusal('x', '127.0.0.1'),
    ).toBeUndefined();
    expect(() => loadConfig({ GRAPHIR_EGRESS_ALLOW: '127.0.0.1:80' })).toThrow(
      /GRAPHIR_EGRESS_ALLOW must list .* not "127.0.0.1:80"/,
    );
  });
});
