/**
 * POST /api/verify end to end through HTTP, with the chain answered by a real
 * Esplora fake on loopback: every code of docs/protocol.md §7 that the raw
 * verifier can give is reached here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { attestationId, buildAttestationMessage } from '../src/features/attestations/index.js';
import { addressFromPrivateKey, signBip322, signLegacy } from './support/bitcoin-signer.js';
import { startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { testApp } from './support/app.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const DAY = 86_400;
const key = new Uint8Array(32).fill(7);
const p2wpkh = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
const p2tr = addressFromPrivateKey(key, 'p2tr', 'mainnet');
const p2pkh = addressFromPrivateKey(key, 'p2pkh', 'mainnet');
const testnetAddress = addressFromPrivateKey(key, 'p2wpkh', 'testnet');
const nonce = '0011223344556677889900aabbccddee';
const nowSeconds = Math.floor(NOW.getTime() / 1000);

function utxo(txid: string, value: number, height: number | null, ageDays = 0) {
  return height === null
    ? { txid, vout: 0, status: { confirmed: false }, value }
    : {
        txid,
        vout: 0,
        status: { confirmed: true, block_height: height, block_hash: '00'.repeat(32), block_time: nowSeconds - ageDays * DAY },
        value,
      };
}

function attestation(address: string, extensions: Record<string, string> = {}, identities = ['nostr:npub1example', 'github:alice']) {
  return buildAttestationMessage({ address, identities, nonce, issuedAt: '2026-04-22T12:00:00Z', extensions });
}

let esplora: EsploraFake;
let app: FastifyInstance;

/** POST /api/verify of an attestation of the P2WPKH address with `extensions`, signed with BIP-322. */
async function verifySigned(extensions: Record<string, string>) {
  const msg = attestation(p2wpkh, extensions);
  return verify({ addr: p2wpkh, msg, sig: signBip322({ privateKey: key, address: p2wpkh, message: msg }) });
}

async function verify(body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/api/verify', payload: body });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
  esplora.setUtxos(p2wpkh, [
    utxo('aa'.repeat(32), 150_000, 900, 40),
    utxo('bb'.repeat(32), 50_000, 990, 10),
    utxo('cc'.repeat(32), 9_999, null),
  ]);
  esplora.setUtxos(p2tr, [utxo('dd'.repeat(32), 1_000_000, 500, 365)]);
  esplora.setUtxos(p2pkh, [utxo('ee'.repeat(32), 5_000, null)]);
  app = await testApp({ ESPLORA_URLS: esplora.url }, { now: () => NOW });
});
afterAll(async () => {
  await app.close();
  await esplora.close();
});

describe('POST /api/verify', () => {
  it('verifies a P2WPKH BIP-322 attestation with chain metrics', async () => {
    const msg = attestation(p2wpkh);
    const sig = signBip322({ privateKey: key, address: p2wpkh, message: msg });
    const { status, body, headers } = await verify({ addr: p2wpkh, msg, sig, scheme: 'bip322' });
    expect(status).toBe(200);
    expect(headers['cache-control']).toBe('no-store');
    expect(body).toEqual({
      ok: true,
      codes: ['sig_ok_bip322', 'bond_confirmed'],
      address: p2wpkh,
      attestation_id: attestationId(msg),
      identities: [
        { protocol: 'github', identifier: 'alice' },
        { protocol: 'nostr', identifier: 'npub1example' },
      ],
      network: 'mainnet',
      sats: 200_000,
      days: 40,
      score: body.score,
      metrics: { sats_bonded: 200_000, days_unspent: 40, score: body.score },
      issued_at: '2026-04-22T12:00:00Z',
    });
    // Score v0 = round(ln(1 + sats) × (1 + days / 30), 2)
    expect(body.score).toBeCloseTo(Math.round(Math.log(200_001) * (1 + 40 / 30) * 100) / 100, 2);
  });

  it('verifies P2TR and the full form, and hex encoding', async () => {
    const msg = attestation(p2tr);
    for (const sig of [
      signBip322({ privateKey: key, address: p2tr, message: msg }),
      signBip322({ privateKey: key, address: p2tr, message: msg, taprootSighashAll: true }),
      signBip322({ privateKey: key, address: p2tr, message: msg, form: 'full' }),
      signBip322({ privateKey: key, address: p2tr, message: msg, encoding: 'hex' }),
    ]) {
      const { body } = await verify({ addr: p2tr, msg, sig });
      expect(body.codes).toEqual(['sig_ok_bip322', 'bond_confirmed']);
      expect(body).toMatchObject({ ok: true, sats: 1_000_000, days: 365, score: 181.9 });
    }
  });

  it('applies the bond rule (days from the youngest UTXO needed to reach the bond)', async () => {
    const { body } = await verifySigned({ bond: '160000' });
    expect(body).toMatchObject({ ok: true, sats: 160_000, days: 10, codes: ['sig_ok_bip322', 'bond_confirmed'] });
  });

  it('bond_insufficient when the bond exceeds the confirmed balance', async () => {
    const { body } = await verifySigned({ bond: '250000' });
    expect(body.ok).toBe(false);
    expect(body.codes).toContain('bond_insufficient');
  });

  it('legacy signmessage on P2PKH: sig_ok_legacy, and bond_zero + bond_pending for unconfirmed coins only', async () => {
    const msg = attestation(p2pkh);
    const sig = signLegacy(key, msg);
    const { body } = await verify({ addr: p2pkh, msg, sig, scheme: 'legacy' });
    expect(body.codes).toEqual(['sig_ok_legacy', 'bond_zero', 'bond_pending']);
    expect(body).toMatchObject({ ok: true, sats: 0, days: 0, score: 0 });
    // Detected without a scheme (88 base64 characters, compact header).
    const detected = await verify({ addr: p2pkh, msg, sig });
    expect(detected.body.codes[0]).toBe('sig_ok_legacy');
  });

  it('sig_unsupported_script for a legacy signature on a SegWit address', async () => {
    const msg = attestation(p2wpkh);
    const { body } = await verify({ addr: p2wpkh, msg, sig: signLegacy(key, msg), scheme: 'legacy' });
    expect(body.ok).toBe(false);
    expect(body.codes).toContain('sig_unsupported_script');
  });

  it('sig_invalid for a tampered message, and no chain look-up is made', async () => {
    const msg = attestation(p2wpkh);
    const sig = signBip322({ privateKey: key, address: p2wpkh, message: msg });
    const tampered = attestation(p2wpkh, {}, ['github:mallory']);
    esplora.resetRequests();
    const { status, body } = await verify({ addr: p2wpkh, msg: tampered, sig });
    expect(status).toBe(200);
    expect(body.ok).toBe(false);
    expect(body.codes).toEqual(['sig_invalid']);
    expect(esplora.requests.utxo).toBe(0);
  });

  it('invalid_scheme for an unknown scheme', async () => {
    const msg = attestation(p2wpkh);
    const { body } = await verify({ addr: p2wpkh, msg, sig: 'AAAA', scheme: 'schnorr-magic' });
    expect(body).toMatchObject({ ok: false });
    expect(body.codes).toContain('invalid_scheme');
  });

  it('decode_error for a message that is not canonical', async () => {
    const msg = attestation(p2wpkh).replace('orangecheck\n', 'orangecheck2\n');
    const { body } = await verify({ addr: p2wpkh, msg, sig: 'AAAA' });
    expect(body.ok).toBe(false);
    expect(body.codes).toContain('decode_error');
    expect(body.attestation_id).toBe(attestationId(msg));
  });

  it('invalid_attestation_id when the claimed id differs', async () => {
    const msg = attestation(p2wpkh);
    const sig = signBip322({ privateKey: key, address: p2wpkh, message: msg });
    const { body } = await verify({ addr: p2wpkh, msg, sig, attestation_id: 'ab'.repeat(32) });
    expect(body.ok).toBe(false);
    expect(body.codes).toContain('invalid_attestation_id');
  });

  it('bad_request (in codes) when the message binds another address', async () => {
    const msg = attestation(p2tr);
    const { status, body } = await verify({ addr: p2wpkh, msg, sig: 'AAAA' });
    expect(status).toBe(200);
    expect(body.codes).toContain('bad_request');
  });

  it('expired when the expires extension is past', async () => {
    const { body } = await verifySigned({ expires: '2026-05-01T00:00:00Z' });
    expect(body.ok).toBe(false);
    expect(body.codes).toContain('expired');
  });

  it('network_testmode for test coins in a mainnet service: they count as nothing', async () => {
    const msg = attestation(testnetAddress, { network: 'testnet' });
    const sig = signBip322({ privateKey: key, address: testnetAddress, message: msg });
    const { body } = await verify({ addr: testnetAddress, msg, sig });
    expect([...body.codes].sort()).toEqual(['network_testmode', 'sig_ok_bip322']);
    expect(body).toMatchObject({ ok: true, network: 'testnet', sats: 0, days: 0, score: 0 });
  });

  it('chain_unavailable (HTTP 200, ok false) when every Esplora base fails', async () => {
    const down = await testApp({ ESPLORA_URLS: 'http://127.0.0.1:9' }, { now: () => NOW });
    try {
      const msg = attestation(p2wpkh);
      const sig = signBip322({ privateKey: key, address: p2wpkh, message: msg });
      const response = await down.inject({ method: 'POST', url: '/api/verify', payload: { addr: p2wpkh, msg, sig } });
      expect(response.statusCode).toBe(200);
      expect(response.json().ok).toBe(false);
      expect(response.json().codes).toEqual(['sig_ok_bip322', 'chain_unavailable']);
    } finally {
      await down.close();
    }
  });

  it('garbage signatures are sig_invalid, never a 500', async () => {
    const msg = attestation(p2wpkh);
    for (const sig of [
      '!!!!',
      '00',
      'A'.repeat(8000),
      '////',
      'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      const { status, body } = await verify({ addr: p2wpkh, msg, sig });
      expect(status).toBe(200);
      expect(body.codes).toContain('sig_invalid');
    }
  });
});
