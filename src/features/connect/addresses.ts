/**
 * The IP addresses a webhook may not reach (docs/protocol.md §6 "Webhooks"):
 * every range the IANA IPv4 and IPv6 Special-Purpose Address Registries mark
 * not globally reachable, with the IPv6 forms that carry an IPv4 address
 * judged by that address, so no spelling of a refused address gets through.
 *
 * Addresses are parsed only by node:net (`isIP`, `BlockList`), never by
 * matching text; a URL's host has been normalised by the WHATWG URL parser
 * first (`127.1`, `0x7f.1` and `2130706433` are all 127.0.0.1 by then).
 *
 * Choices where the registries leave room:
 * - 192.0.0.0/24 and 2001::/23 are refused whole, though each holds a few
 *   globally reachable entries (anycast PCP and TURN, AMT, AS112, ORCHIDv2,
 *   drone tags): none is a place a webhook receiver lives, and Teredo
 *   (2001::/32) hides its IPv4 addresses obfuscated inside.
 * - ::/96, the deprecated IPv4-compatible form, is refused whole (it holds
 *   :: and ::1 too).
 * - IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16 are
 *   judged by the IPv4 address they carry: refused when it is, accepted when
 *   it is global (64:ff9b::808:808 reaches 8.8.8.8 through a NAT64 gateway).
 *   The local-use NAT64 prefix 64:ff9b:1::/48 is refused whole.
 * - Multicast (224.0.0.0/4, ff00::/8) and the deprecated 6to4 relay anycast
 *   (192.88.99.0/24) and site-local (fec0::/10) ranges are refused too.
 *
 * Each family has its own BlockList holding rules of that family only:
 * node:net compares an IPv4 address with an IPv6 rule as its mapped form,
 * so a ::ffff:0:0/96 rule in a shared list would refuse every IPv4 address.
 */
import { BlockList, isIP } from 'node:net';

type Range = readonly [network: string, prefix: number, what: string];

/** 127.0.0.0/8: allowed in development (docs/protocol.md §6 "Webhooks"). */
const LOOPBACK_IPV4: Range = ['127.0.0.0', 8, 'loopback, RFC 1122'];

/** IPv4 ranges refused besides loopback. */
const REFUSED_IPV4: readonly Range[] = [
  ['0.0.0.0', 8, '"this network", RFC 791'],
  ['10.0.0.0', 8, 'private use, RFC 1918'],
  ['100.64.0.0', 10, 'shared address space, RFC 6598'],
  ['169.254.0.0', 16, 'link local, RFC 3927'],
  ['172.16.0.0', 12, 'private use, RFC 1918'],
  ['192.0.0.0', 24, 'IETF protocol assignments, RFC 6890'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1), RFC 5737'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast, RFC 7526'],
  ['192.168.0.0', 16, 'private use, RFC 1918'],
  ['198.18.0.0', 15, 'benchmarking, RFC 2544'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2), RFC 5737'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3), RFC 5737'],
  ['224.0.0.0', 4, 'multicast, RFC 5771'],
  ['240.0.0.0', 4, 'reserved, RFC 1112; holds the limited broadcast 255.255.255.255, RFC 919'],
];

/** IPv6 ranges refused besides loopback and the IPv4-carrying forms. */
const REFUSED_IPV6: readonly Range[] = [
  ['::', 96, 'unspecified, loopback and deprecated IPv4-compatible, RFC 4291'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation, RFC 8215'],
  ['100::', 64, 'discard-only, RFC 6666'],
  ['100:0:0:1::', 64, 'dummy prefix, RFC 9780'],
  ['2001::', 23, 'IETF protocol assignments (Teredo, benchmarking, ORCHID, …), RFC 2928'],
  ['2001:db8::', 32, 'documentation, RFC 3849'],
  ['3fff::', 20, 'documentation, RFC 9637'],
  ['5f00::', 16, 'segment routing SIDs, RFC 9602'],
  ['fc00::', 7, 'unique local, RFC 4193'],
  ['fe80::', 10, 'link-local unicast, RFC 4291'],
  ['fec0::', 10, 'deprecated site-local, RFC 3879'],
  ['ff00::', 8, 'multicast, RFC 4291'],
];

/** The IPv6 spellings of an IPv4 range: mapped (RFC 4291), NAT64 well-known prefix (RFC 6052), 6to4 (RFC 3056). */
function ipv4Carriers([network, prefix]: Range): [string, number][] {
  const octets = network.split('.').map(Number);
  const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
  return [
    [`::ffff:${network}`, 96 + prefix],
    [`64:ff9b::${network}`, 96 + prefix],
    [`2002:${hex(octets[0]!, octets[1]!)}:${hex(octets[2]!, octets[3]!)}::`, 16 + prefix],
  ];
}

const LOOPBACK = { ipv4: new BlockList(), ipv6: new BlockList() };
LOOPBACK.ipv4.addSubnet(LOOPBACK_IPV4[0], LOOPBACK_IPV4[1], 'ipv4');
LOOPBACK.ipv6.addAddress('::1', 'ipv6');
// Only the mapped form is this machine's loopback; NAT64 and 6to4 forms of 127/8 go elsewhere.
const [mappedLoopback, mappedLoopbackPrefix] = ipv4Carriers(LOOPBACK_IPV4)[0]!;
LOOPBACK.ipv6.addSubnet(mappedLoopback, mappedLoopbackPrefix, 'ipv6');

const REFUSED = { ipv4: new BlockList(), ipv6: new BlockList() };
for (const range of [LOOPBACK_IPV4, ...REFUSED_IPV4]) {
  REFUSED.ipv4.addSubnet(range[0], range[1], 'ipv4');
  for (const [network, prefix] of ipv4Carriers(range)) REFUSED.ipv6.addSubnet(network, prefix, 'ipv6');
}
for (const [network, prefix] of REFUSED_IPV6) REFUSED.ipv6.addSubnet(network, prefix, 'ipv6');

function familyOf(address: string): 'ipv4' | 'ipv6' | null {
  // A zone (fe80::1%eth0) names a local interface: no global address needs one.
  if (address.includes('%')) return null;
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}

/** True for an IP literal that is this machine's loopback: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104. */
export function isLoopbackAddress(address: string): boolean {
  const family = familyOf(address);
  return family !== null && LOOPBACK[family].check(address, family);
}

/** True for an IP literal in no refused range; false for loopback and for anything that is not an IP literal. */
export function isGloballyReachable(address: string): boolean {
  const family = familyOf(address);
  return family !== null && !REFUSED[family].check(address, family);
}
