/**
 * The OrangeCheck conformance vectors (test/vectors/oc-protocol, from
 * `orangecheck/oc-protocol` `conformance/vectors`, which the SDKs' own
 * `sdk/src/__tests__/conformance.test.ts` runs), one test each, through
 * oc-host's HTTP routes:
 *
 * - canonical_message, identities_format, attestation_id: POST /api/verify
 *   parses the expected bytes, derives the vector's id and echoes the
 *   identities as signed (an unsorted list is `decode_error`);
 * - score_v0: POST /api/verify of a signed attestation over an Esplora server
 *   holding that bond for that many days answers the vector's score;
 * - reject: a look-up by such an identity is refused (400), so no binding
 *   with a smuggled line or a second item can be asked for;
 * - bip322_signature: POST /api/verify answers `sig_ok_bip322` or `sig_invalid`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey } from '../support/bitcoin-signer.js';
import { testApp } from '../support/app.js';
import { signAttestation } from '../support/attestations.js';
import { startEsploraFake, type EsploraFake } from '../support/esplora-fake.js';

interface Vector {
  readonly id: string;
  readonly category: string;
  readonly description: string;
  readonly input: Record<string, unknown>;
  readonly expected: Record<string, unknown>;
}
type IdentityInput = { protocol: string; identifier: string };

const DIR = join(import.meta.dirname, '..', 'vectors', 'oc-protocol');
const vectors: Vector[] = readdirSync(DIR)
  .filter((name) => /^tv\d+\.json$/.test(name))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Vector);
const NOW = new Date('2026-06-01T00:00:00Z');
const DAY = 86_400;
const NOT_A_SIGNATURE = 'AkcwRAIgAAAA';

let esplora: EsploraFake;
let app: FastifyInstance;
beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
  app = await testApp({ ESPLORA_URLS: esplora.url }, { now: () => NOW });
});
afterAll(async () => {
  await app?.close();
  await esplora?.close();
});

async function verify(body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/api/verify', payload: body });
  expect(response.statusCode).toBe(200);
  return response.json() as {
    ok: boolean;
    codes: string[];
    attestation_id: string;
    identities: IdentityInput[];
    score: number;
    sats: number;
    days: number;
  };
}

const sortedItems = (identities: readonly IdentityInput[]) =>
  identities.map(({ protocol, identifier }) => `${protocol}:${identifier}`).sort();
const messageWith = (list: string, address = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq') =>
  `orangecheck\nidentities: ${list}\naddress: ${address}\npurpose: portable reputation attestation (non-custodial)\nnonce: 0011223344556677889900aabbccddee\nissued_at: 2026-04-22T12:00:00Z\nack: I attest control of this address and bind it to my identities.\n`;

it('has every vector of the protocol repository (23, six categories)', () => {
  expect(vectors.map((vector) => vector.id)).toEqual(Array.from({ length: 23 }, (_, index) => `tv${String(index + 1).padStart(2, '0')}`));
  expect(new Set(vectors.map((vector) => vector.category))).toEqual(
    new Set(['canonical_message', 'identities_format', 'attestation_id', 'score_v0', 'reject', 'bip322_signature']),
  );
});

describe.each(vectors.map((vector) => [`${vector.id} (${vector.category}): ${vector.description}`, vector] as const))(
  '%s',
  (_name, vector) => {
    it('passes through HTTP', async () => {
      switch (vector.category) {
        case 'canonical_message': {
          const input = vector.input as { address: string; identities: IdentityInput[] };
          const message = vector.expected.message as string;
          const result = await verify({ addr: input.address, msg: message, sig: NOT_A_SIGNATURE, scheme: 'bip322' });
          expect(result.codes).not.toContain('decode_error');
          expect(result.codes).toContain('sig_invalid');
          expect(sortedItems(result.identities)).toEqual(sortedItems(input.identities));
          // Echoed as signed: the protocol of every item is the one in the message.
          expect(result.identities.map(({ protocol, identifier }) => `${protocol}:${identifier}`)).toEqual(sortedItems(input.identities));
          break;
        }
        case 'identities_format': {
          const input = vector.input as { identities: IdentityInput[] };
          const formatted = vector.expected.formatted as string;
          const sorted = await verify({
            addr: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
            msg: messageWith(formatted),
            sig: NOT_A_SIGNATURE,
          });
          expect(sorted.codes).not.toContain('decode_error');
          expect(sorted.identities.map(({ protocol, identifier }) => `${protocol}:${identifier}`).join(',')).toBe(formatted);
          const inInputOrder = input.identities.map(({ protocol, identifier }) => `${protocol}:${identifier}`).join(',');
          if (inInputOrder !== formatted) {
            const unsorted = await verify({
              addr: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
              msg: messageWith(inInputOrder),
              sig: NOT_A_SIGNATURE,
            });
            expect(unsorted.codes).toContain('decode_error');
          }
          break;
        }
        case 'attestation_id': {
          const message = vector.input.message as string;
          const address = /\naddress: (\S+)\n/.exec(message)![1]!;
          const result = await verify({
            addr: address,
            msg: message,
            sig: NOT_A_SIGNATURE,
            attestation_id: vector.expected.attestation_id,
          });
          expect(result.attestation_id).toBe(vector.expected.attestation_id);
          expect(result.codes).not.toContain('invalid_attestation_id');
          break;
        }
        case 'score_v0': {
          const { sats_bonded: sats, days_unspent: days } = vector.input as { sats_bonded: number; days_unspent: number };
          const key = new Uint8Array(32).fill(Number(vector.id.slice(2)));
          const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
          esplora.setUtxos(
            address,
            sats === 0
              ? []
              : [
                  {
                    txid: 'cd'.repeat(32),
                    vout: 0,
                    value: sats,
                    status: {
                      confirmed: true,
                      block_height: 900,
                      block_hash: '00'.repeat(32),
                      block_time: NOW.getTime() / 1000 - days * DAY,
                    },
                  },
                ],
          );
          const attestation = signAttestation(key, address, '2026-04-22T12:00:00Z');
          const result = await verify({ addr: address, msg: attestation.msg, sig: attestation.sig, scheme: 'bip322' });
          expect(result.codes).toContain('sig_ok_bip322');
          expect({ sats: result.sats, days: result.days, score: result.score }).toEqual({ sats, days, score: vector.expected.score_v0 });
          break;
        }
        case 'reject': {
          const [identity] = vector.input.identities as IdentityInput[];
          const response = await app.inject({
            method: 'GET',
            url: `/api/check?identity=${encodeURIComponent(`${identity!.protocol}:${identity!.identifier}`)}`,
          });
          // A comma splits what a client meant as one identifier into two items, so it cannot name one subject either.
          expect(response.statusCode).toBe(400);
          expect(response.json()).toMatchObject({ error: 'bad_request', reasons: ['bad_request'] });
          break;
        }
        case 'bip322_signature': {
          const input = vector.input as { address: string; message: string; signature: string; scheme: string };
          const result = await verify({ addr: input.address, msg: input.message, sig: input.signature, scheme: input.scheme });
          expect(result.codes).toContain(vector.expected.valid === true ? 'sig_ok_bip322' : 'sig_invalid');
          break;
        }
        default:
          throw new Error(`test: unknown vector category ${vector.category}`);
      }
    });
  },
);
