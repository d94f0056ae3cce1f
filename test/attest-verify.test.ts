/**
 * verifyAttestation end to end (docs/api.md POST /api/verify, docs/protocol.md
 * §7): real signatures from src/bitcoin's signer, chain data from a real
 * Esplora fake on loopback, a frozen clock. Every verification code the
 * verifier can give is reached here.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { attestationId, buildAttestationMessage, type AttestationFields } from '../src/format/canonical.js';
import { scoreV0 } from '../src/features/attestations/score.js';
import {
  applyThresholds,
  createSignatureVerdicts,
  verifyAttestation,
  type AttestationResult,
  type SignatureVerdicts,
  type VerifyAttestationDeps,
} from '../src/features/attestations/verify.js';
import { addressFromPrivateKey, signBip322, signLegacy } from './support/bitcoin-signer.js';
import { createEsploraClient, type ChainSource } from '../src/chain/index.js';
import { closedPortUrl, loadEsploraFixture, startEsploraFake, type EsploraFake, verifyDepsOver } from './support/esplora-fake.js';

const NOW = new Date('2026-04-22T12:00:00Z');
const NONCE = '0011223344556677889900aabbccddee';
const fixture = loadEsploraFixture();

function key(byte: number): Uint8Array {
  return new Uint8Array(32).fill(byte);
}

const segwitKey = key(1);
const taprootKey = key(2);
const nestedKey = key(3);
const legacyKey = key(4);
const testnetKey = key(5);
const emptyKey = key(6);
const pendingKey = key(7);

const SEGWIT = addressFromPrivateKey(segwitKey, 'p2wpkh', 'mainnet');
const TAPROOT = addressFromPrivateKey(taprootKey, 'p2tr', 'mainnet');
const NESTED = addressFromPrivateKey(nestedKey, 'p2sh-p2wpkh', 'mainnet');
const LEGACY = addressFromPrivateKey(legacyKey, 'p2pkh', 'mainnet');
const TESTNET = addressFromPrivateKey(testnetKey, 'p2wpkh', 'testnet');
const EMPTY = addressFromPrivateKey(emptyKey, 'p2wpkh', 'mainnet');
const PENDING = addressFromPrivateKey(pendingKey, 'p2wpkh', 'mainnet');

let esplora: EsploraFake;
let deps: VerifyAttestationDeps;

beforeAll(async () => {
  esplora = await startEsploraFake({
    tipHeight: fixture.tipHeight,
    utxosByAddress: {
      [SEGWIT]: fixture.utxoSets.mixed!,
      [TAPROOT]: fixture.utxoSets.mixed!,
      [NESTED]: fixture.utxoSets.mixed!,
      [LEGACY]: fixture.utxoSets.mixed!,
      [TESTNET]: fixture.utxoSets.mixed!,
      [EMPTY]: fixture.utxoSets.empty!,
      [PENDING]: fixture.utxoSets.unconfirmedOnly!,
    },
  });
  deps = verifyDepsOver(esplora, NOW);
});

afterAll(async () => {
  await esplora.close();
});

beforeEach(() => {
  esplora.resetRequests();
});

function message(address: string, extra: Partial<AttestationFields> = {}): string {
  return buildAttestationMessage({
    address,
    identities: ['x:alice', 'github:alice'],
    nonce: NONCE,
    issuedAt: '2026-04-20T08:30:00Z',
    ...extra,
  });
}

function sign(privateKey: Uint8Array, address: string, msg: string, form?: 'simple' | 'full'): string {
  return signBip322(form === undefined ? { privateKey, address, message: msg } : { privateKey, address, message: msg, form });
}

// The fixture "mixed" at the frozen now: 410,000 sats counted, oldest 315 days.
const MIXED_SATS = 410_000;
const MIXED_DAYS = 315;

describe('verifyAttestation: successes', () => {
  it('verifies a P2WPKH BIP-322 attestation and reads its bond from the chain', async () => {
    const msg = message(SEGWIT);
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg), scheme: 'bip322' }, deps);
    const score = scoreV0(MIXED_SATS, MIXED_DAYS);
    expect(result).toEqual({
      ok: true,
      codes: ['sig_ok_bip322', 'bond_confirmed'],
      address: SEGWIT,
      attestation_id: attestationId(msg),
      identities: [
        { protocol: 'github', identifier: 'alice' },
        { protocol: 'x', identifier: 'alice' },
      ],
      network: 'mainnet',
      sats: MIXED_SATS,
      days: MIXED_DAYS,
      score,
      metrics: { sats_bonded: MIXED_SATS, days_unspent: MIXED_DAYS, score },
      issued_at: '2026-04-20T08:30:00Z',
    } satisfies AttestationResult);
    expect(score).toBe(148.63);
    expect(esplora.requests).toEqual({ utxo: 1, tipHeight: 1, tipHash: 0, other: 0 });
    expect(esplora.queriedAddresses).toEqual([SEGWIT]);
  });

  it('verifies P2TR (simple), P2SH-P2WPKH (simple) and P2PKH (full) BIP-322 proofs', async () => {
    for (const [privateKey, address, form] of [
      [taprootKey, TAPROOT, 'simple'],
      [nestedKey, NESTED, 'simple'],
      [segwitKey, SEGWIT, 'full'],
      [legacyKey, LEGACY, 'full'],
    ] as const) {
      const msg = message(address);
      const result = await verifyAttestation({ addr: address, msg, sig: sign(privateKey, address, msg, form) }, deps);
      expect(result.codes, `${address} ${form}`).toEqual(['sig_ok_bip322', 'bond_confirmed']);
      expect(result.sats).toBe(MIXED_SATS);
    }
  });

  it('verifies a legacy signmessage signature on P2PKH, named or detected', async () => {
    const msg = message(LEGACY);
    const sig = signLegacy(legacyKey, msg);
    for (const scheme of ['legacy', undefined]) {
      const result = await verifyAttestation({ addr: LEGACY, msg, sig, scheme }, deps);
      expect(result.ok).toBe(true);
      expect(result.codes).toEqual(['sig_ok_legacy', 'bond_confirmed']);
    }
  });

  it('uses the bond extension: sats = B, days from the youngest UTXO needed', async () => {
    const msg = message(SEGWIT, { extensions: { bond: 100_000 } });
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_confirmed']);
    expect([result.sats, result.days, result.score]).toEqual([100_000, 107, scoreV0(100_000, 107)]);
  });

  it('applies MIN_CONFIRMATIONS from its dependencies', async () => {
    const msg = message(SEGWIT);
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, { ...deps, minConfirmations: 12 });
    expect(result.sats).toBe(200_000);
  });

  it('reports expires_at as written while it has not passed', async () => {
    const msg = message(SEGWIT, { extensions: { expires: '2026-04-22T12:00:01Z' } });
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.ok).toBe(true);
    expect(result.expires_at).toBe('2026-04-22T12:00:01Z');
  });

  it('accepts the right attestation id, in either hex case', async () => {
    const msg = message(SEGWIT);
    const sig = sign(segwitKey, SEGWIT, msg);
    for (const claimed of [attestationId(msg), attestationId(msg).toUpperCase()]) {
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig, attestationId: claimed }, deps);
      expect(result.ok).toBe(true);
    }
  });
});

describe('verifyAttestation: bond codes', () => {
  it('bond_zero for an address without UTXOs (a warning: ok stays true)', async () => {
    const msg = message(EMPTY);
    const result = await verifyAttestation({ addr: EMPTY, msg, sig: sign(emptyKey, EMPTY, msg) }, deps);
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_zero']);
    expect(result.ok).toBe(true);
    expect([result.sats, result.days, result.score]).toEqual([0, 0, 0]);
  });

  it('bond_zero and bond_pending when only unconfirmed UTXOs exist', async () => {
    const msg = message(PENDING);
    const result = await verifyAttestation({ addr: PENDING, msg, sig: sign(pendingKey, PENDING, msg) }, deps);
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_zero', 'bond_pending']);
    expect(result.ok).toBe(true);
  });

  it('bond_insufficient when the bond exceeds the confirmed balance', async () => {
    const msg = message(SEGWIT, { extensions: { bond: MIXED_SATS + 1 } });
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_insufficient']);
    expect(result.ok).toBe(false);
    expect([result.sats, result.days, result.score]).toEqual([0, 0, 0]);
  });
});

describe('verifyAttestation: failures', () => {
  it('sig_invalid for a signature over another message, and reads no chain', async () => {
    const msg = message(SEGWIT);
    const other = message(SEGWIT, { nonce: 'ffeeddccbbaa99887766554433221100' });
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, other) }, deps);
    expect(result.codes).toEqual(['sig_invalid']);
    expect(result.ok).toBe(false);
    expect(result.sats).toBe(0);
    expect(esplora.requests.utxo).toBe(0);
  });

  it('sig_invalid for a signature by another key and for garbage', async () => {
    const msg = message(SEGWIT);
    for (const sig of [sign(emptyKey, EMPTY, msg), '', 'not base64!', 'AAAA', '00'.repeat(70)]) {
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig }, deps);
      expect(result.codes).toEqual(['sig_invalid']);
    }
  });

  it('sig_unsupported_script for a legacy signature on a SegWit address', async () => {
    const msg = message(SEGWIT);
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: signLegacy(segwitKey, msg), scheme: 'legacy' }, deps);
    expect(result.codes).toEqual(['sig_unsupported_script']);
    expect(result.ok).toBe(false);
    expect(esplora.requests.utxo).toBe(0);
  });

  it('invalid_scheme for any scheme but bip322 and legacy, without checking the signature', async () => {
    const msg = message(SEGWIT);
    const sig = sign(segwitKey, SEGWIT, msg);
    for (const scheme of ['BIP322', 'ecdsa', '', 'bip322 ']) {
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig, scheme }, deps);
      expect(result.codes, scheme).toEqual(['invalid_scheme']);
      expect(result.ok).toBe(false);
      expect(result.attestation_id).toBe(attestationId(msg));
    }
    expect(esplora.requests.utxo).toBe(0);
  });

  it('decode_error for a malformed message, still reporting the signature, the id and addr', async () => {
    const msg = message(SEGWIT).replace(/\n/g, '\r\n');
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result).toEqual({
      ok: false,
      codes: ['decode_error', 'sig_ok_bip322'],
      address: SEGWIT,
      attestation_id: attestationId(msg),
      identities: [],
      network: 'mainnet',
      sats: 0,
      days: 0,
      score: 0,
      metrics: { sats_bonded: 0, days_unspent: 0, score: 0 },
    });
    expect(esplora.requests.utxo).toBe(0);
  });

  it('decode_error when the network extension does not match the address', async () => {
    const msg = message(SEGWIT, { extensions: { network: 'testnet' } });
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.codes).toContain('decode_error');
    expect(result.ok).toBe(false);
    expect(esplora.requests.utxo).toBe(0);

    const testnetMsg = message(TESTNET);
    const unmarked = await verifyAttestation({ addr: TESTNET, msg: testnetMsg, sig: sign(testnetKey, TESTNET, testnetMsg) }, deps);
    expect(unmarked.codes).toEqual(['decode_error', 'sig_ok_bip322']);
  });

  it('invalid_attestation_id when the claimed id is not the message hash', async () => {
    const msg = message(SEGWIT);
    const sig = sign(segwitKey, SEGWIT, msg);
    for (const claimed of ['0'.repeat(64), attestationId(`${msg}x`), '', 'nonsense']) {
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig, attestationId: claimed }, deps);
      expect(result.codes).toEqual(['invalid_attestation_id', 'sig_ok_bip322', 'bond_confirmed']);
      expect(result.ok).toBe(false);
    }
  });

  it('expired when the expires extension has passed (at the instant itself too)', async () => {
    for (const expires of ['2026-04-22T11:59:59Z', '2026-04-22T12:00:00Z', '2026-04-22T13:00:00+02:00']) {
      const msg = message(SEGWIT, { extensions: { expires } });
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
      expect(result.codes, expires).toEqual(['expired', 'sig_ok_bip322', 'bond_confirmed']);
      expect(result.ok).toBe(false);
      expect(result.expires_at).toBe(expires);
    }
  });

  it('network_testmode for test coins on a mainnet service: counts nothing, reads no chain', async () => {
    const msg = message(TESTNET, { extensions: { network: 'testnet' } });
    const result = await verifyAttestation({ addr: TESTNET, msg, sig: sign(testnetKey, TESTNET, msg) }, deps);
    expect(result.codes).toEqual(['network_testmode', 'sig_ok_bip322']);
    expect(result.ok).toBe(true);
    expect(result.network).toBe('testnet');
    expect([result.sats, result.days, result.score]).toEqual([0, 0, 0]);
    expect(esplora.requests.utxo).toBe(0);
    expect(applyThresholds(result, { minSats: 1, minDays: 0 }).ok).toBe(false);
  });

  it('reads the chain for test coins on a service of that network', async () => {
    const msg = message(TESTNET, { extensions: { network: 'testnet' } });
    const result = await verifyAttestation({ addr: TESTNET, msg, sig: sign(testnetKey, TESTNET, msg) }, { ...deps, network: 'testnet' });
    expect(result.codes).toEqual(['sig_ok_bip322', 'bond_confirmed']);
    expect(result.sats).toBe(MIXED_SATS);

    const mainnetMsg = message(SEGWIT);
    const onTestnet = await verifyAttestation(
      { addr: SEGWIT, msg: mainnetMsg, sig: sign(segwitKey, SEGWIT, mainnetMsg) },
      { ...deps, network: 'testnet' },
    );
    expect(onTestnet.codes).toEqual(['network_testmode', 'sig_ok_bip322']);
  });

  it('bad_request when the address line differs from addr', async () => {
    const msg = message(EMPTY);
    const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.codes).toEqual(['bad_request', 'sig_ok_bip322']);
    expect(result.ok).toBe(false);
    expect(result.address).toBe(SEGWIT);
    expect(esplora.requests.utxo).toBe(0);
  });

  it('bad_request when addr is not a Bitcoin address', async () => {
    const msg = message(SEGWIT);
    const result = await verifyAttestation({ addr: 'bc1qnotanaddress', msg, sig: sign(segwitKey, SEGWIT, msg) }, deps);
    expect(result.codes).toEqual(['bad_request']);
    expect(result.address).toBe('bc1qnotanaddress');
  });

  it('chain_unavailable when no Esplora base answers, never throwing', async () => {
    const closed = await closedPortUrl();
    const broken = await startEsploraFake({ tipHeight: 1, mode: 'malformed' });
    try {
      const chain = createEsploraClient({ bases: [closed, broken.url], timeoutMs: 500 });
      const msg = message(SEGWIT);
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg) }, { ...deps, chain });
      expect(result.codes).toEqual(['sig_ok_bip322', 'chain_unavailable']);
      expect(result.ok).toBe(false);
      expect([result.sats, result.days, result.score]).toEqual([0, 0, 0]);
      expect(broken.requests.utxo).toBe(1);
    } finally {
      await broken.close();
    }
  });

  it('chain_unavailable when a custom chain source throws or returns nonsense', async () => {
    const msg = message(SEGWIT);
    const sig = sign(segwitKey, SEGWIT, msg);
    const throwing: ChainSource = {
      addressUtxos: () => {
        throw new Error('boom');
      },
    };
    const nonsense: ChainSource = {
      addressUtxos: async () => ({
        utxos: [{ txid: 'a'.repeat(64), vout: 0, value: -5, status: { confirmed: true, block_height: 1, block_time: 1 } }],
        tipHeight: 10,
        source: 'test',
      }),
    };
    for (const chain of [throwing, nonsense]) {
      const result = await verifyAttestation({ addr: SEGWIT, msg, sig }, { ...deps, chain });
      expect(result.codes).toEqual(['sig_ok_bip322', 'chain_unavailable']);
    }
  });

  it('de-duplicates codes, keeping one stable order', async () => {
    // decode_error twice (a CR, then no longer parsed) cannot happen; bad_request twice can:
    // addr undecodable and different from the address line.
    const msg = message(SEGWIT);
    const result = await verifyAttestation({ addr: 'x', msg, sig: 'AAAA', scheme: 'nope', attestationId: 'f' }, deps);
    expect(result.codes).toEqual(['invalid_scheme', 'invalid_attestation_id', 'bad_request']);
  });

  it('never throws on non-string fields from an untyped caller', async () => {
    const result = await verifyAttestation({ addr: 5, msg: null, sig: {}, scheme: 7 } as never, deps);
    expect(result.ok).toBe(false);
    expect(result.codes).toContain('bad_request');
    expect(result.attestation_id).toBe(attestationId(''));
  });
});

describe('applyThresholds', () => {
  const base = { ok: true, codes: ['sig_ok_bip322', 'bond_confirmed'] as const, sats: 100_000, days: 30 };

  it('passes exactly at the thresholds', () => {
    expect(applyThresholds(base, { minSats: 100_000, minDays: 30 })).toEqual({ ok: true, reasons: [] });
    expect(applyThresholds(base, { minSats: 0, minDays: 0 })).toEqual({ ok: true, reasons: [] });
  });

  it('names each threshold below', () => {
    expect(applyThresholds(base, { minSats: 100_001, minDays: 30 })).toEqual({ ok: false, reasons: ['below_min_sats'] });
    expect(applyThresholds(base, { minSats: 0, minDays: 31 })).toEqual({ ok: false, reasons: ['below_min_days'] });
    expect(applyThresholds(base, { minSats: 1e9, minDays: 1e9 })).toEqual({ ok: false, reasons: ['below_min_sats', 'below_min_days'] });
  });

  it('fails a result that did not verify, with its error codes as reasons', () => {
    const failed = { ok: false, codes: ['expired', 'sig_ok_bip322', 'bond_confirmed'] as const, sats: 100_000, days: 30 };
    expect(applyThresholds(failed, { minSats: 0, minDays: 0 })).toEqual({ ok: false, reasons: ['expired'] });
    expect(applyThresholds(failed, { minSats: 200_000, minDays: 0 })).toEqual({ ok: false, reasons: ['expired', 'below_min_sats'] });
  });
});

describe('verifyAttestation: remembered signature verdicts', () => {
  /** Verdicts that count what they are asked and told. */
  function countingVerdicts() {
    const inner = createSignatureVerdicts(100);
    const counts = { hits: 0, stored: 0 };
    const verdicts: SignatureVerdicts = {
      get(key) {
        const code = inner.get(key);
        if (code !== undefined) counts.hits += 1;
        return code;
      },
      set(key, code) {
        counts.stored += 1;
        inner.set(key, code);
      },
    };
    return { verdicts, counts };
  }

  it('checks a signature once: the same attestation again gives the same result from the remembered verdict', async () => {
    const { verdicts, counts } = countingVerdicts();
    const msg = message(SEGWIT);
    const input = { addr: SEGWIT, msg, sig: sign(segwitKey, SEGWIT, msg), scheme: 'bip322' };
    const first = await verifyAttestation(input, { ...deps, signatures: verdicts });
    const second = await verifyAttestation(input, { ...deps, signatures: verdicts });
    expect(second).toEqual(first);
    expect(first.ok).toBe(true);
    expect(counts).toEqual({ hits: 1, stored: 1 });
  });

  it('a remembered verdict never covers another signature, scheme, address or message', async () => {
    const { verdicts, counts } = countingVerdicts();
    const msg = message(SEGWIT);
    const sig = sign(segwitKey, SEGWIT, msg);
    expect((await verifyAttestation({ addr: SEGWIT, msg, sig, scheme: 'bip322' }, { ...deps, signatures: verdicts })).ok).toBe(true);
    // A valid signature of another message by the same key does not sign this one.
    const forged = sign(segwitKey, SEGWIT, message(SEGWIT, { issuedAt: '2026-04-21T08:30:00Z' }));
    const withForged = await verifyAttestation({ addr: SEGWIT, msg, sig: forged, scheme: 'bip322' }, { ...deps, signatures: verdicts });
    expect(withForged.ok).toBe(false);
    const detected = await verifyAttestation({ addr: SEGWIT, msg, sig }, { ...deps, signatures: verdicts });
    expect(detected.codes).toContain('sig_ok_bip322');
    const otherMessage = message(SEGWIT, { nonce: 'ffeeddccbbaa99887766554433221100' });
    const replayed = await verifyAttestation({ addr: SEGWIT, msg: otherMessage, sig, scheme: 'bip322' }, { ...deps, signatures: verdicts });
    expect(replayed.ok).toBe(false);
    expect(counts.hits).toBe(0);
    expect(counts.stored).toBe(4);
  });
});
