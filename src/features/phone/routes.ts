/**
 * Signing in on a desktop from a phone's wallet (docs/api.md "Signing in
 * from a phone", docs/protocol.md "Signing in from a phone"): the desktop
 * starts and polls, the phone looks, approves or declines. The poll that
 * finds the hand-off approved names the approving address; the claim that
 * confirms that address signs in through the one door
 * (SignInService.complete), in the desktop's own request, so the cookie is
 * set in the browser that holds the poll token and nowhere else.
 */
import { Type, type TSchema } from 'typebox';
import { encode } from 'uqr';
import { clientFacts, localDeviceLabel } from '../../identity/session/index.js';
import { requestLocale } from '../../web/locale.js';
import { checkReturnTo } from '../../identity/signin/index.js';
import type { HandoffService } from './handoff.js';
import type { OriginRules } from '../../identity/signin/index.js';
import type { SignInService } from '../../identity/account/index.js';
import {
  AddQuery,
  ANSWER,
  answer,
  EXAMPLE,
  EXAMPLE_ACCOUNT,
  errorResponses,
  example,
  NullableString,
  StringEnum,
} from '../../platform/http/schemas.js';
import { noStore, wantsAdd, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

/** A phone key or poll token: 32 bytes, base64url. Malformed ones are told apart by the service, as `invalid_handoff`. */
const Secret = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
/** The shape of a phone key or poll token in the explorer's examples: well formed, issued by no one (answers `invalid_handoff`). */
const EXAMPLE_SECRET = 'Q2hhbmdlIG1lOiBhIHBob25lIGtleSBvciBwb2xsIHRva2Vu';

const StartBody = Type.Object(
  {
    return_to: Type.Optional(
      Type.String({ maxLength: 2048, description: 'Where the desktop goes once signed in: a path here or a URL of a family origin' }),
    ),
  },
  example({ return_to: '/account' }),
);
/** The hand-off of the examples: started at the sign-in of the examples, so it lives until 12:04. */
const EXAMPLE_PHONE_URL = `https://auth.example.com/signin/phone#${EXAMPLE_SECRET}`;
const EXAMPLE_HANDOFF_CODE = '482913';
const EXAMPLE_HANDOFF_EXPIRY = '2026-04-22T12:04:00.000Z';

const Started = Type.Object(
  {
    ok: Type.Literal(true),
    id: Type.String({ description: 'The hand-off, sent back with `token` on claim' }),
    token: Type.String({ description: "The desktop's poll secret: keep it in the page, never show it" }),
    code: Type.String({ description: '6 digits both screens show' }),
    phone_url: Type.String({ description: '`<PUBLIC_URL>/signin/phone#<phone key>`, the QR code’s content' }),
    qr: Type.Object(
      {
        size: Type.Integer({ description: 'Modules per side, without a quiet zone' }),
        rows: Type.Array(Type.String(), { description: 'One string per row, `1` for a dark module and `0` for a light one' }),
      },
      { description: '`phone_url` as a QR code (error correction M)' },
    ),
    expires_at: Type.String({ description: 'ISO 8601 UTC; a hand-off lives 3 minutes' }),
  },
  answer('Started: show the QR code and the code, then poll POST /api/auth/handoff/claim', {
    ok: true,
    id: EXAMPLE.id,
    token: EXAMPLE_SECRET,
    code: EXAMPLE_HANDOFF_CODE,
    phone_url: EXAMPLE_PHONE_URL,
    qr: qrRows(EXAMPLE_PHONE_URL),
    expires_at: EXAMPLE_HANDOFF_EXPIRY,
  }),
);
const KeyBody = Type.Object({ key: Secret('The phone key, from the fragment of `phone_url`') }, example({ key: EXAMPLE_SECRET }));
const Looked = Type.Object(
  {
    ok: Type.Literal(true),
    code: Type.String(),
    desktop: NullableString({ description: "The desktop's browser, as a device label (`Chrome 156 on Linux`), or null" }),
    desktop_text: NullableString({ description: '`desktop` in the language of the request (`Chrome 156 unter Linux`), for the page' }),
    site: Type.String({ description: 'The host the desktop signs in to' }),
    other_network: Type.Boolean({ description: "True when the phone is not on the desktop's network (/24, /48), or either is unknown" }),
    expires_at: Type.String(),
  },
  answer('What the phone shows before the person approves: the code to compare and the desktop asking', {
    ok: true,
    code: EXAMPLE_HANDOFF_CODE,
    desktop: 'Chrome 156 on Linux',
    desktop_text: 'Chrome 156 on Linux',
    site: 'auth.example.com',
    other_network: false,
    expires_at: EXAMPLE_HANDOFF_EXPIRY,
  }),
);
const ApproveBody = Type.Object(
  {
    key: Secret('The phone key'),
    message: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A challenge from GET /api/challenge?purpose=login, audience this origin',
    }),
    signature: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'BIP-322 signature (base64 or hex), or legacy signmessage for P2PKH',
    }),
  },
  example({ key: EXAMPLE_SECRET, message: EXAMPLE.challenge, signature: EXAMPLE.attestation.signature }),
);
const Approved = Type.Object({ ok: Type.Literal(true) }, answer("Approved: the desktop's next poll signs it in", { ok: true }));
const Declined = Type.Object({ ok: Type.Literal(true) }, answer("Declined: the desktop's next poll says so", { ok: true }));
const ClaimBody = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64 }),
    token: Secret('The poll token of the start'),
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
    confirm_address: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'The person confirmed signing in as this account: the `address` an `approved` answer named. Without it no claim signs in',
      }),
    ),
  },
  example({ id: EXAMPLE.id, token: EXAMPLE_SECRET }),
);
const Claimed = Type.Object(
  {
    ok: Type.Literal(true),
    status: StringEnum(['pending', 'approved', 'declined', 'expired', 'signed_in'] as const),
    expires_at: Type.Optional(Type.String({ description: 'While pending, approved, declined or expired' })),
    address: Type.Optional(
      Type.String({
        description:
          'Once approved: the Bitcoin address the phone approved with. Ask the person "Sign in as …?", then claim again with it as `confirm_address`, or cancel',
      }),
    ),
    account: Type.Optional(Type.Ref('Account', { description: 'Once signed in, as POST /api/auth/signin answers' })),
    token: Type.Optional(Type.String({ description: 'Once signed in: the JWT also set as the `oc_session` cookie' })),
    return_to: Type.Optional(NullableString({ description: 'Once signed in: the checked `return_to` of the start, or null' })),
  },
  answer('Where the hand-off stands; once the phone approved and the person confirmed the account, this browser is signed in (as here)', {
    ok: true,
    status: 'signed_in',
    account: EXAMPLE_ACCOUNT,
    token: ANSWER.token,
    return_to: '/account',
  }),
);

const CancelBody = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }), token: Secret('The poll token of the start') },
  example({ id: EXAMPLE.id, token: EXAMPLE_SECRET }),
);
const Cancelled = Type.Object(
  { ok: Type.Literal(true) },
  answer('Cancelled: the hand-off is discarded, and its approval can no longer sign in', { ok: true }),
);

/** The phone routes: a credential (the key) is checked, so closed while the limit store is down. */
const PHONE = POLICY.familyCredential;
/** The desktop polls every 2 seconds for up to 3 minutes: the read budget (60/min), not the sign-in one (20/min). */
const POLL = Object.freeze({ ...POLICY.familyCredential, limit: 'read' as const });

/** `text` as QR rows of `0` and `1`, without the quiet zone (the page draws it). */
function qrRows(text: string): { size: number; rows: string[] } {
  const qr = encode(text, { ecc: 'M', border: 0 });
  return { size: qr.size, rows: qr.data.map((row) => row.map((dark) => (dark ? '1' : '0')).join('')) };
}

/** What signing in from a phone uses. */
export interface HandoffRoutes {
  readonly door: SessionDoor;
  readonly handoffs: HandoffService;
  readonly origins: OriginRules;
  readonly signIn: SignInService;
  readonly publicUrl: string;
}

export function registerHandoffRoutes(app: TypedApp, deps: HandoffRoutes): void {
  app.post(
    '/api/auth/handoff',
    {
      ...route(POLICY.familyCredential, 'handoff', 'Start signing in this browser from a wallet on a phone', {
        body: StartBody,
        response: { 200: Started, ...errorResponses(400, 403, 413, 415, 429, 503) },
      }),
      // A bodiless POST starts without a return_to.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const asked = request.body.return_to;
      const returnTo = asked === undefined || asked === '' ? null : checkReturnTo(asked, deps.publicUrl, deps.origins.isFamilyOrigin);
      const facts = clientFacts(request.headers['user-agent'], request.ip);
      const started = await deps.handoffs.start({ desktop: facts.device, network: facts.network, returnTo });
      noStore(reply);
      return {
        ok: true,
        id: started.id,
        token: started.token,
        code: started.code,
        phone_url: started.phoneUrl,
        qr: qrRows(started.phoneUrl),
        expires_at: started.expiresAt,
      };
    },
  );

  /** A phone's call: the key, and what it answers. */
  const phoneRoute = <Body extends TSchema>(summary: string, body: Body, answer: TSchema) =>
    route(PHONE, 'handoff', summary, { body, response: { 200: answer, ...errorResponses(400, 401, 403, 409, 410, 413, 415, 429, 503) } });

  app.post('/api/auth/handoff/look', phoneRoute('The phone: what it is asked to approve', KeyBody, Looked), async (request, reply) => {
    const view = await deps.handoffs.look(request.body.key, clientFacts(undefined, request.ip).network);
    noStore(reply);
    return {
      ok: true,
      code: view.code,
      desktop: view.desktop,
      desktop_text: view.desktop === null ? null : localDeviceLabel(view.desktop, requestLocale(request)),
      site: view.site,
      other_network: view.otherNetwork,
      expires_at: view.expiresAt,
    };
  });

  app.post(
    '/api/auth/handoff/approve',
    phoneRoute("The phone: approve with the wallet's signature of a login challenge", ApproveBody, Approved),
    async (request) => {
      const { key, message, signature } = request.body;
      await deps.handoffs.approve(key, { message, signature });
      return { ok: true };
    },
  );

  app.post('/api/auth/handoff/decline', phoneRoute("The phone: this wasn't me", KeyBody, Declined), async (request) => {
    await deps.handoffs.decline(request.body.key);
    return { ok: true };
  });

  app.post(
    '/api/auth/handoff/claim',
    route(POLL, 'handoff', "The desktop's poll; once the phone approved, signs this browser in", {
      querystring: AddQuery,
      body: ClaimBody,
      response: { 200: Claimed, ...errorResponses(400, 401, 403, 409, 413, 415, 429, 503) },
    }),
    async (request, reply) => {
      const { id, token, add, confirm_address: confirmAddress } = request.body;
      // Before the claim: a refused roster (ambiguous_session) must not consume the approval.
      const target = await deps.door.signInTarget(request, wantsAdd(request.query, add));
      const claimed = await deps.handoffs.claim(id, token, confirmAddress);
      noStore(reply);
      if (claimed.status === 'approved') {
        return { ok: true, status: claimed.status, address: claimed.address, expires_at: claimed.expiresAt };
      }
      if (claimed.status !== 'confirmed') return { ok: true, status: claimed.status, expires_at: claimed.expiresAt };
      const issued = await deps.signIn.complete({ ...target, identity: { kind: 'btc', value: claimed.address }, method: 'bip322' });
      return { ...deps.door.answerIssued(reply, issued), status: 'signed_in' as const, return_to: claimed.returnTo };
    },
  );

  app.post(
    '/api/auth/handoff/cancel',
    route(POLL, 'handoff', "The desktop's Cancel: discards the hand-off, approved or not", {
      body: CancelBody,
      response: { 200: Cancelled, ...errorResponses(400, 401, 403, 409, 413, 415, 429, 503) },
    }),
    async (request) => {
      await deps.handoffs.cancel(request.body.id, request.body.token);
      return { ok: true };
    },
  );
}
