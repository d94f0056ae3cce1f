import { describe, expect, it } from 'vitest';
import {
  MAX_SESSION_COOKIES,
  clearedSessionCookies,
  readSessionCookies,
  serializeClearedSessionCookie,
  serializeSessionCookie,
} from '../src/identity/session/index.js';

const TOKEN = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
const OTHER = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ5In0.b3RoZXI';

describe('serializeSessionCookie (docs/protocol.md §3)', () => {
  it('writes a host-only cookie exactly', () => {
    expect(serializeSessionCookie(TOKEN, { maxAgeSeconds: 2_592_000 })).toBe(
      `oc_session=${TOKEN}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000`,
    );
  });

  it('adds the family domain when configured', () => {
    expect(serializeSessionCookie(TOKEN, { maxAgeSeconds: 60, domain: '.example.com' })).toBe(
      `oc_session=${TOKEN}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=60; Domain=.example.com`,
    );
  });

  it('drops fractions of a second from Max-Age', () => {
    expect(serializeSessionCookie(TOKEN, { maxAgeSeconds: 59.9 })).toMatch(/; Max-Age=59$/);
  });

  it('throws on values that would corrupt the header', () => {
    expect(() => serializeSessionCookie(`${TOKEN}; Domain=evil.com`, { maxAgeSeconds: 60 })).toThrow(TypeError);
    expect(() => serializeSessionCookie('', { maxAgeSeconds: 60 })).toThrow(TypeError);
    expect(() => serializeSessionCookie(TOKEN, { maxAgeSeconds: -1 })).toThrow(RangeError);
    expect(() => serializeSessionCookie(TOKEN, { maxAgeSeconds: Number.NaN })).toThrow(RangeError);
    expect(() => serializeSessionCookie(TOKEN, { maxAgeSeconds: 60, domain: 'example.com; SameSite=None' })).toThrow(TypeError);
    expect(() => serializeSessionCookie(TOKEN, { maxAgeSeconds: 60, domain: 'exa mple.com' })).toThrow(TypeError);
  });
});

describe('serializeClearedSessionCookie', () => {
  it('clears with the same attributes and Max-Age=0', () => {
    expect(serializeClearedSessionCookie()).toBe('oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0');
    expect(serializeClearedSessionCookie({ domain: '.example.com' })).toBe(
      'oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0; Domain=.example.com',
    );
  });

  it('clearedSessionCookies clears the family and the host-only cookie when a domain is set', () => {
    expect(clearedSessionCookies()).toEqual(['oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0']);
    expect(clearedSessionCookies({ domain: '.example.com' })).toEqual([
      'oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0; Domain=.example.com',
      'oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0',
    ]);
  });
});

describe('readSessionCookies', () => {
  it('returns every oc_session value, in header order', () => {
    expect(readSessionCookies(`theme=dark; oc_session=${TOKEN}; lang=en; oc_session=${OTHER}`)).toEqual([TOKEN, OTHER]);
    expect(readSessionCookies(`oc_session=${OTHER};oc_session=${TOKEN}`)).toEqual([OTHER, TOKEN]);
  });

  it('reads several Cookie headers (HTTP/2 may send them apart)', () => {
    expect(readSessionCookies([`oc_session=${TOKEN}`, `a=b; oc_session=${OTHER}`])).toEqual([TOKEN, OTHER]);
  });

  it('returns each distinct value once', () => {
    expect(readSessionCookies(`oc_session=${TOKEN}; oc_session=${TOKEN}`)).toEqual([TOKEN]);
  });

  it('accepts a quoted value and surrounding whitespace', () => {
    expect(readSessionCookies(`  oc_session = "${TOKEN}" ;x=y`)).toEqual([TOKEN]);
  });

  it('returns nothing for no header or no session cookie', () => {
    expect(readSessionCookies(undefined)).toEqual([]);
    expect(readSessionCookies('')).toEqual([]);
    expect(readSessionCookies('theme=dark; lang=en')).toEqual([]);
  });

  it('ignores garbage, lookalike names and values that cannot be a token', () => {
    const header = [
      ';;;',
      '=oc_session',
      'oc_session',
      'oc_session=',
      'OC_SESSION=abc.def.ghi',
      'xoc_session=abc.def.ghi',
      'oc_session2=abc.def.ghi',
      'oc_session=has space',
      'oc_session=a,b',
      'oc_session="unterminated',
      'oc_session=%E2%9C%93',
      `oc_session=${TOKEN}`,
    ].join('; ');
    expect(readSessionCookies(header)).toEqual([TOKEN]);
  });

  it(`returns at most ${MAX_SESSION_COOKIES} values, each at most 8 KiB`, () => {
    const many = Array.from({ length: 20 }, (_, index) => `oc_session=${TOKEN}${index}`).join('; ');
    const values = readSessionCookies(many);
    expect(values).toHaveLength(MAX_SESSION_COOKIES);
    expect(values[0]).toBe(`${TOKEN}0`);
    const huge = `oc_session=${'a'.repeat(8193)}; oc_session=${TOKEN}`;
    expect(readSessionCookies(huge)).toEqual([TOKEN]);
    expect(readSessionCookies(`oc_session=${'a'.repeat(8192)}`)).toEqual(['a'.repeat(8192)]);
  });
});
