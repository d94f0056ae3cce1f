/**
 * Signing in on a desktop from a wallet on a phone (docs/protocol.md
 * "Signing in from a phone"). The desktop starts a hand-off and gets two
 * secrets: a poll token it keeps, and a phone key it shows in a QR code. The
 * phone, with the key, learns what it is about to approve (the desktop's
 * browser, the site, a short code both screens show) and approves with an
 * ordinary login challenge its wallet signs; the desktop, with its token,
 * claims the approved hand-off once, and only then gets a session.
 *
 * - The token and the key are 256 random bits each (base64url), kept only as
 *   SHA-256: a leaked table gives neither. The key finds its row by its
 *   hash; the token is compared in constant time with the row's, found by id.
 * - Holding the key is not holding the session: the phone's approve answers
 *   no session, and only the holder of the token, which never leaves the
 *   desktop, can claim. Someone who photographs the QR code can approve or
 *   decline (the desktop then shows what happened), never sign in.
 * - The signature is checked by {@link proveAddress}, as every wallet
 *   sign-in: `purpose=login`, the audience this service's own origin (a
 *   signature made for another site of the family does not count), the
 *   nonce consumed once.
 * - Every change of state is one conditional update: approve and decline
 *   only from pending and before expiry, claim only from approved, so two
 *   phones cannot both approve and two claims cannot both sign in.
 * - An approval does not sign the desktop in by itself: whoever sees the
 *   QR code can approve with their own wallet. The desktop's poll answers
 *   which address approved, and only a claim that names that address back
 *   (the person's "Sign in as …?" answered Confirm) consumes the hand-off
 *   and signs in; Cancel discards it. So no claim, with `add` or without,
 *   makes an account the browser did not ask for active unseen.
 * - An approved hand-off may be claimed {@link HANDOFF_CLAIM_GRACE_MS} past
 *   its expiry, so an approval in its last second is not lost to the
 *   desktop's polling interval.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { randomHex, sha256Hex, timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';
import { HANDOFF_PURGE_DELAY_MS, type HandoffRecord, type HandoffStore } from './store.js';
import { proveAddress, type ChallengeProofContext } from '../../identity/signin/index.js';

/** docs/protocol.md "Signing in from a phone": a hand-off lives 3 minutes. */
const HANDOFF_TTL_MS = 3 * 60_000;

/** How long after expiry an approved hand-off may still be claimed (shorter than the purge delay). */
const HANDOFF_CLAIM_GRACE_MS = 30_000;

if (HANDOFF_CLAIM_GRACE_MS >= HANDOFF_PURGE_DELAY_MS) throw new Error('handoff: the claim grace must end before the row is purged');

/** The secrets: 32 bytes as base64url, 43 characters. */
const SECRET_BYTES = 32;
const SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const ID_FORMAT = /^[0-9a-f]{32}$/;

/** 6 digits, as the e-mail code; shown "123 456". */
const CODE_DIGITS = 6;

export interface HandoffServiceOptions {
  readonly store: HandoffStore;
  readonly now: () => Date;
  /** `PUBLIC_URL`: the phone page's address, and the audience a signature must name. */
  readonly publicUrl: string;
  /** The challenge rules at this instant (the sign-in's own). */
  readonly proof: () => ChallengeProofContext;
  /** Default {@link HANDOFF_TTL_MS}. */
  readonly ttlMs?: number | undefined;
}

/** Who started the hand-off, as the phone is told. */
export interface HandoffOrigin {
  /** The desktop's device label ("Chrome 156 on Linux"), or null. */
  readonly desktop: string | null;
  /** The desktop's coarse network (src/identity/session/device.ts), never shown. */
  readonly network: string | null;
  /** A checked `return_to`, or null. */
  readonly returnTo: string | null;
}

export interface StartedHandoff {
  readonly id: string;
  readonly token: string;
  readonly code: string;
  readonly phoneUrl: string;
  readonly expiresAt: string;
}

export interface HandoffView {
  readonly code: string;
  readonly desktop: string | null;
  readonly site: string;
  /** True when the phone's network (/24, /48) is not the desktop's, or either is unknown. */
  readonly otherNetwork: boolean;
  readonly expiresAt: string;
}

export type ClaimResult =
  | { readonly status: 'pending' | 'declined' | 'expired'; readonly expiresAt: string }
  /** The phone approved with `address`: the desktop asks the person before it claims again with that address. */
  | { readonly status: 'approved'; readonly address: string; readonly expiresAt: string }
  /** Confirmed and consumed: the caller signs `address` in. */
  | { readonly status: 'confirmed'; readonly address: string; readonly returnTo: string | null };

function secret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

function invalid(): OcError {
  return new OcError('invalid_handoff', 'handoff: no sign-in matches this code; start again on the desktop');
}

function expired(): OcError {
  return new OcError('handoff_expired', 'handoff: this sign-in has expired; start again on the desktop');
}

function used(): OcError {
  return new OcError('handoff_used', 'handoff: this sign-in was already answered');
}

function mismatch(): OcError {
  return new OcError('handoff_mismatch', 'handoff: the phone approved another account than the one confirmed; ask for a new code');
}

export class HandoffService {
  readonly #options: HandoffServiceOptions;
  readonly #ttlMs: number;
  readonly #origin: string;

  constructor(options: HandoffServiceOptions) {
    this.#options = options;
    this.#ttlMs = options.ttlMs ?? HANDOFF_TTL_MS;
    this.#origin = new URL(options.publicUrl).origin;
  }

  /** A new hand-off for the desktop that asks. */
  async start(from: HandoffOrigin): Promise<StartedHandoff> {
    const id = randomHex(16);
    const token = secret();
    const key = secret();
    const code = randomInt(0, 10 ** CODE_DIGITS)
      .toString()
      .padStart(CODE_DIGITS, '0');
    const createdAt = this.#options.now().getTime();
    const expiresAt = createdAt + this.#ttlMs;
    await this.#options.store.putHandoff({
      id,
      token_hash: sha256Hex(token),
      key_hash: sha256Hex(key),
      code,
      desktop: from.desktop,
      network: from.network,
      site: this.#siteOf(from.returnTo),
      return_to: from.returnTo,
      created_at: createdAt,
      expires_at: expiresAt,
    });
    // The key goes in the fragment: browsers send it to no server, log or Referer.
    return { id, token, code, phoneUrl: `${this.#origin}/signin/phone#${key}`, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** What the phone shows before it asks the wallet. */
  async look(key: string, phoneNetwork: string | null): Promise<HandoffView> {
    const row = await this.#pendingByKey(key);
    return {
      code: row.code,
      desktop: row.desktop,
      site: row.site ?? new URL(this.#origin).host,
      otherNetwork: row.network === null || phoneNetwork === null || row.network !== phoneNetwork,
      expiresAt: new Date(row.expires_at).toISOString(),
    };
  }

  /** The phone's wallet signed a login challenge for this service: the hand-off records the address. */
  async approve(key: string, proof: { readonly message: string; readonly signature: string }): Promise<void> {
    const row = await this.#pendingByKey(key);
    const address = await proveAddress(
      { message: proof.message, signature: proof.signature, expectedAudience: this.#origin },
      'login',
      this.#options.proof(),
    );
    await this.#move(row, { from: 'pending', to: 'approved', address });
  }

  /** "This wasn't me": the desktop is told, and the hand-off can no longer be approved. */
  async decline(key: string): Promise<void> {
    await this.#move(await this.#pendingByKey(key), { from: 'pending', to: 'declined' });
  }

  /**
   * The desktop's poll. An approved hand-off answers the address that
   * approved it, until the desktop claims it again naming that address
   * (`confirmAddress`, the person's Confirm): then it is consumed, by one
   * conditional update, so the caller that gets `confirmed` signs in and
   * any other claim of it is `handoff_used`. A confirmation naming another
   * address is `handoff_mismatch` and consumes nothing.
   */
  async claim(id: string, token: string, confirmAddress?: string): Promise<ClaimResult> {
    const row = await this.#byToken(id, token);
    const now = this.#options.now().getTime();
    const expiresAt = new Date(row.expires_at).toISOString();
    if (row.state === 'claimed') throw used();
    if (row.state === 'declined') return { status: 'declined', expiresAt };
    if (row.state === 'pending') return { status: now < row.expires_at ? 'pending' : 'expired', expiresAt };
    const liveAfter = now - HANDOFF_CLAIM_GRACE_MS;
    if (row.expires_at <= liveAfter) return { status: 'expired', expiresAt };
    const address = row.address ?? '';
    if (confirmAddress === undefined) return { status: 'approved', address, expiresAt };
    if (confirmAddress !== address) throw mismatch();
    if (!(await this.#options.store.moveHandoff(row.id, { from: 'approved', to: 'claimed', liveAfter }))) throw used();
    return { status: 'confirmed', address, returnTo: row.return_to };
  }

  /**
   * The desktop's Cancel: a pending or approved hand-off is discarded (it
   * reads as declined from then on), so its approval can never be claimed.
   * Cancelling one already declined or cancelled changes nothing; one already
   * claimed is `handoff_used`.
   */
  async cancel(id: string, token: string): Promise<void> {
    const row = await this.#byToken(id, token);
    for (const from of ['approved', 'pending'] as const) {
      if (row.state === from && (await this.#options.store.moveHandoff(row.id, { from, to: 'declined', liveAfter: 0 }))) return;
    }
    // Moved meanwhile: by a claim (then it is too late), or by the phone's decline.
    const now = await this.#options.store.findHandoff({ id: row.id });
    if (now?.state === 'claimed') throw used();
  }

  /** The hand-off of the desktop's id and poll token; else `invalid_handoff`, whatever was wrong. */
  async #byToken(id: string, token: string): Promise<HandoffRecord> {
    const row = ID_FORMAT.test(id) && SECRET_FORMAT.test(token) ? await this.#options.store.findHandoff({ id }) : null;
    // Compared even when no row was found, against a hash of nothing, so the work does not tell ids apart.
    const matches = timingSafeEqualString(sha256Hex(token), row?.token_hash ?? sha256Hex(''));
    if (row === null || !matches) throw invalid();
    return row;
  }

  /** What the phone is told it signs in to: the host of a URL `return_to`, else this service's own. */
  #siteOf(returnTo: string | null): string {
    if (returnTo !== null && /^https?:\/\//i.test(returnTo)) return new URL(returnTo).host;
    return new URL(this.#origin).host;
  }

  /** The live, pending hand-off of `key`; else the error that says why not. */
  async #pendingByKey(key: string): Promise<HandoffRecord> {
    if (!SECRET_FORMAT.test(key)) throw invalid();
    const row = await this.#options.store.findHandoff({ keyHash: sha256Hex(key) });
    if (row === null) throw invalid();
    if (row.state !== 'pending') throw used();
    if (this.#options.now().getTime() >= row.expires_at) throw expired();
    return row;
  }

  /** One conditional change; when another request moved the row first, or it expired meanwhile, says which. */
  async #move(row: HandoffRecord, move: { from: 'pending'; to: 'approved' | 'declined'; address?: string }): Promise<void> {
    const now = this.#options.now().getTime();
    if (await this.#options.store.moveHandoff(row.id, { ...move, liveAfter: now })) return;
    throw now >= row.expires_at ? expired() : used();
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Signing in on a desktop from a phone's wallet. */
    readonly handoffs: HandoffService;
  }
}
