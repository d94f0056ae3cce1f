/**
 * Raw verification of an attestation (docs/api.md POST /api/verify,
 * docs/protocol.md §7): the message, the signature, and the chain metrics,
 * reported as status codes. Hostile input is an expected outcome, so this
 * never throws: every failure is a code and `ok` is false exactly when a code
 * of severity `error` is present.
 */
import { createHash } from 'node:crypto';
import {
  addressMatchesNetwork,
  tryDecodeAddress,
  verifySignature,
  type DecodedAddress,
  type SignatureScheme,
} from '../../bitcoin/index.js';
import type { ChainSource } from '../../chain/index.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { attestationId, parseAttestationMessage, type ParsedAttestation } from '../../format/index.js';
import { codesPass, severityOf, type VerifyCode } from './codes.js';
import type { Identity } from '../../format/index.js';
import { computeBondMetrics } from './metrics.js';
import { scoreV0 } from './score.js';
import { createLruCache } from '../../platform/cache.js';

export interface VerifyAttestationInput {
  readonly addr: string;
  readonly msg: string;
  readonly sig: string;
  /** `bip322` or `legacy`; absent means "detect" (docs/protocol.md §7 "Signatures"). */
  readonly scheme?: string | undefined;
  /** An id the caller claims for `msg`; checked against its SHA-256 when given. */
  readonly attestationId?: string | undefined;
}

export interface VerifyAttestationDeps {
  readonly chain: ChainSource;
  /** `BITCOIN_NETWORK`: the network whose coins count (docs/protocol.md §7 "Network"). */
  readonly network: BitcoinNetwork;
  readonly minConfirmations: number;
  readonly now: () => Date;
  /** Verdicts of signatures already checked; without it every signature is checked. */
  readonly signatures?: SignatureVerdicts;
}

/**
 * Verdicts of the signature checks already made. A verdict is a pure
 * function of the scheme asked for, the address, the message and the
 * signature, so it never goes stale: a site that verifies the same
 * attestations again and again pays for each signature once
 * (docs/performance.md "The chain"). Keys are SHA-256 of the four,
 * length-prefixed, so no two inputs share one.
 */
export interface SignatureVerdicts {
  get(key: string): VerifyCode | undefined;
  set(key: string, code: VerifyCode): void;
}

/** The default bound: 10,000 verdicts are about 2 MB. */
const DEFAULT_SIGNATURE_VERDICTS = 10_000;

/** An in-memory LRU of verdicts (per instance: a check costs less than a round trip to Redis). */
export function createSignatureVerdicts(maxEntries: number = DEFAULT_SIGNATURE_VERDICTS): SignatureVerdicts {
  const cache = createLruCache<VerifyCode>({ now: () => 0, maxEntries });
  return {
    get: (key) => cache.get(key)?.value,
    set: (key, code) => cache.set(key, code, Number.POSITIVE_INFINITY),
  };
}

function verdictKey(input: { address: string; message: string; signature: string; scheme: SignatureScheme | undefined }): string {
  const parts = [input.scheme ?? '', input.address, input.signature, input.message];
  return createHash('sha256')
    .update(parts.map((part) => `${part.length}:${part}`).join('|'))
    .digest('base64');
}

interface AttestationMetrics {
  readonly sats_bonded: number;
  readonly days_unspent: number;
  readonly score: number;
}

export interface AttestationResult {
  readonly ok: boolean;
  readonly codes: readonly VerifyCode[];
  readonly address: string;
  readonly attestation_id: string;
  readonly identities: readonly Identity[];
  readonly network: string;
  readonly sats: number;
  readonly days: number;
  readonly score: number;
  readonly metrics: AttestationMetrics;
  readonly expires_at?: string;
  readonly issued_at?: string;
}

const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['bip322', 'legacy'];
const SIGNATURE_OK: ReadonlySet<VerifyCode> = new Set<VerifyCode>(['sig_ok_bip322', 'sig_ok_legacy']);

/**
 * Verifies `(addr, msg, sig, scheme)` in this order, collecting codes:
 * 1. scheme: anything but `bip322`/`legacy` is `invalid_scheme`; absent detects;
 * 2. the canonical message (`decode_error`);
 * 3. a claimed attestation id (`invalid_attestation_id`);
 * 4. `addr` itself and the message's `address` line against it (`bad_request`);
 * 5. the message's address against its `network:` extension (`decode_error`);
 * 6. the `expires` extension against `now` (`expired`);
 * 7. the signature (`sig_*`), whenever the scheme is known and `addr` decodes,
 *    so that a caller learns the signature is fine even when the message is not;
 * 8. the chain metrics, only for a verified signature over a well-formed
 *    message about `addr` on the service's own network; chain failure is
 *    `chain_unavailable`.
 *
 * A message whose network is not `deps.network` carries `network_testmode`
 * and counts nothing (sats = days = score = 0), so no threshold above 0
 * passes on test coins (docs/protocol.md §7).
 */
export async function verifyAttestation(input: VerifyAttestationInput, deps: VerifyAttestationDeps): Promise<AttestationResult> {
  const codes: VerifyCode[] = [];
  // The route validates the body's shape; this guard keeps the promise of
  // never throwing even for a caller that does not.
  const addr = typeof input.addr === 'string' ? input.addr : '';
  const msg = typeof input.msg === 'string' ? input.msg : '';
  const sig = typeof input.sig === 'string' ? input.sig : '';
  if (addr !== input.addr || msg !== input.msg || sig !== input.sig) codes.push('bad_request');
  const id = attestationId(msg);

  // 1. Scheme. An empty or differently cased scheme is unknown too: the
  // field is an enumeration, and guessing would verify something the caller
  // did not ask for.
  let scheme: SignatureScheme | undefined;
  let schemeKnown = true;
  if (input.scheme !== undefined) {
    if ((SIGNATURE_SCHEMES as readonly unknown[]).includes(input.scheme)) scheme = input.scheme as SignatureScheme;
    else {
      codes.push('invalid_scheme');
      schemeKnown = false;
    }
  }

  // 2. Canonical message.
  const parsedResult = parseAttestationMessage(msg);
  const parsed: ParsedAttestation | undefined = parsedResult.ok ? parsedResult.value : undefined;
  if (parsed === undefined) codes.push('decode_error');

  // 3. Claimed id. Hex case carries no meaning, so an uppercase spelling of
  // the right id is accepted.
  if (input.attestationId !== undefined && (typeof input.attestationId !== 'string' || input.attestationId.toLowerCase() !== id)) {
    codes.push('invalid_attestation_id');
  }

  // 4. The subject address and the message's own address line.
  const decoded = safeDecode(addr);
  if (decoded === null) codes.push('bad_request');
  const addressLineMatches = parsed !== undefined && parsed.address === addr;
  if (parsed !== undefined && !addressLineMatches) codes.push('bad_request');

  // 5. The `network:` extension must match the message's address (§7 "Network").
  if (parsed !== undefined) {
    const messageAddress = addressLineMatches ? decoded : safeDecode(parsed.address);
    if (messageAddress !== null && !safeMatchesNetwork(messageAddress, parsed.network)) codes.push('decode_error');
  }

  // 6. Expiry, with the JWT convention: at the instant itself it has expired.
  const now = deps.now();
  if (parsed?.expiresAtMs !== undefined && now.getTime() >= parsed.expiresAtMs) codes.push('expired');

  const testMode = parsed !== undefined && parsed.network !== deps.network;
  if (testMode) codes.push('network_testmode');

  // 7. Signature.
  let signatureVerified = false;
  if (schemeKnown && decoded !== null) {
    const signed = { address: addr, message: msg, signature: sig, scheme };
    let code: VerifyCode;
    if (deps.signatures === undefined) code = safeVerifySignature(signed);
    else {
      const key = verdictKey(signed);
      const known = deps.signatures.get(key);
      code = known ?? safeVerifySignature(signed);
      if (known === undefined) deps.signatures.set(key, code);
    }
    codes.push(code);
    signatureVerified = SIGNATURE_OK.has(code);
  }

  // 8. Chain metrics.
  let sats = 0;
  let days = 0;
  if (signatureVerified && parsed !== undefined && !codes.includes('decode_error') && !codes.includes('bad_request') && !testMode) {
    try {
      const answer = await deps.chain.addressUtxos(addr);
      const metrics = computeBondMetrics({
        utxos: answer.utxos,
        tipHeight: answer.tipHeight,
        minConfirmations: deps.minConfirmations,
        bond: parsed.bond,
        now,
      });
      // A custom source could hand back nonsense; it must not reach the score.
      if (!isCount(metrics.sats) || !isCount(metrics.days)) throw new Error('attest: chain source gave invalid metrics');
      codes.push(...metrics.codes);
      sats = metrics.sats;
      days = metrics.days;
    } catch {
      // Any failure of the source (all bases down, or a bug in a custom
      // source) is reported, never thrown (docs/protocol.md §7).
      codes.push('chain_unavailable');
    }
  }

  const score = scoreV0(sats, days);
  const unique = [...new Set(codes)];
  return {
    ok: codesPass(unique),
    codes: unique,
    address: addr,
    attestation_id: id,
    identities: parsed?.identities ?? [],
    network: parsed?.network ?? deps.network,
    sats,
    days,
    score,
    metrics: { sats_bonded: sats, days_unspent: days, score },
    ...(parsed?.expires !== undefined ? { expires_at: parsed.expires } : {}),
    ...(parsed !== undefined ? { issued_at: parsed.issuedAt } : {}),
  };
}

function isCount(value: number): boolean {
  return Number.isFinite(value) && value >= 0;
}

function safeDecode(address: string): DecodedAddress | null {
  try {
    return tryDecodeAddress(address);
  } catch {
    return null;
  }
}

function safeMatchesNetwork(decoded: DecodedAddress, network: BitcoinNetwork): boolean {
  try {
    return addressMatchesNetwork(decoded, network);
  } catch {
    return false;
  }
}

/** A verifier answers true or false; an exception inside it is a failed signature (docs/architecture.md "Errors"). */
function safeVerifySignature(input: {
  address: string;
  message: string;
  signature: string;
  scheme: SignatureScheme | undefined;
}): VerifyCode {
  try {
    return verifySignature(
      input.scheme === undefined
        ? { address: input.address, message: input.message, signature: input.signature }
        : { address: input.address, message: input.message, signature: input.signature, scheme: input.scheme },
    );
  } catch {
    return 'sig_invalid';
  }
}

export interface Thresholds {
  readonly minSats: number;
  readonly minDays: number;
}

export interface ThresholdOutcome {
  readonly ok: boolean;
  /** Error codes of the base result, then `below_min_sats` / `below_min_days`. Empty when ok. */
  readonly reasons: readonly VerifyCode[];
}

/**
 * The policy step of /api/check (docs/api.md "Check result"), applied after
 * the cache: a threshold is met when the value is at least the minimum. A
 * result that did not verify fails too, with its error codes as reasons.
 */
export function applyThresholds(
  result: Pick<AttestationResult, 'ok' | 'codes' | 'sats' | 'days'>,
  thresholds: Thresholds,
): ThresholdOutcome {
  const reasons: VerifyCode[] = result.ok ? [] : result.codes.filter((code) => severityOf(code) === 'error');
  if (result.sats < thresholds.minSats) reasons.push('below_min_sats');
  if (result.days < thresholds.minDays) reasons.push('below_min_days');
  return { ok: result.ok && reasons.length === 0, reasons };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** Verdicts of the signatures /api/verify already checked. */
    readonly signatureVerdicts: SignatureVerdicts;
  }
}
