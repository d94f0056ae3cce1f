/**
 * Hostile `return_to` values and what the server must make of each
 * (docs/protocol.md §6 "return_to"): refused (`null`), or normalised to a
 * path that stays on this service. Shared by the tests of every place that
 * accepts one: the provider start and callback, /signin and /sudo.
 */

/** `[value, normalised path or null when refused]`, for a service at `publicUrl`. */
export function hostileReturnTo(publicUrl: string): ReadonlyArray<readonly [string, string | null]> {
  const host = new URL(publicUrl).host;
  return [
    // Dot segments, plain and percent-encoded, that resolve to `//host`.
    ['/.//evil.example/x', null],
    ['/%2e//evil.example/x', null],
    ['/%2E//evil.example/x', null],
    ['/.%2e//evil.example/x', null],
    ['/a/..//evil.example/x', null],
    ['/a/%2e%2e//evil.example/x', null],
    ['/%2e%2e/%2e%2e//evil.example', null],
    // An encoded slash or backslash where the host would start.
    ['/%2E/%2Fevil.example', null],
    ['/%2fevil.example', null],
    ['/%5cevil.example', null],
    ['/x/../%5Cevil.example', null],
    // Backslashes, which browsers read as slashes.
    ['/\\evil.example', null],
    ['/\\\\evil.example', null],
    ['http:/\\evil.example', null],
    // Protocol-relative.
    ['//evil.example', null],
    ['//evil.example/x', null],
    // Tabs, newlines, controls and spaces, which the URL parser drops or strips.
    ['/\t/evil.example', null],
    ['/\n/evil.example', null],
    ['\n//evil.example', null],
    ['  /x', null],
    ['/x ', null],
    ['/x\u0000', null],
    ['\u00a0/x', null],
    // Other hosts, credentials, other schemes, relative values.
    ['https://evil.example', null],
    ['https:evil.example', null],
    [`https://user@${host}/x`, null],
    [`http://user:pw@${host}/x`, null],
    ['javascript:alert(1)', null],
    ['JaVaScRiPt:alert(1)', null],
    ['data:text/html,x', null],
    ['evil.example', null],
    // Harmless once normalised: they stay paths of this service.
    ['/%09/evil.example', '/%09/evil.example'],
    ['/a/../account', '/account'],
    ['/%2e/account?x=1#y', '/account?x=1#y'],
    ['/..', '/'],
    ['/account?next=//evil.example#//evil.example', '/account?next=//evil.example#//evil.example'],
    ['/\u2215\u2215evil.example', '/%E2%88%95%E2%88%95evil.example'],
  ];
}
