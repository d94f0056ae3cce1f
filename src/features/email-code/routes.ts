/**
 * E-mail one-time code sign-in (docs/api.md "E-mail one-time code",
 * docs/protocol.md §6). It ends in the same cookie and roster behaviour as the
 * BIP-322 path.
 */
import { Type } from 'typebox';
import type { EmailCodeService } from './email-code.js';
import type { SignInService } from '../../identity/account/index.js';
import { answer, EXAMPLE, errorResponses, example } from '../../platform/http/schemas.js';
import { noStore, wantsAdd, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route, signInRoute } from '../../web/route.js';
import { requestLocale } from '../../web/locale.js';

const StartBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    token: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          "A token that a start for this address answered, to ask for a new code (a resend): while it is unexpired (10 minutes), even when a later start replaced its code, the start is not counted against the limits per address, only against the resends of its start (3 an hour) and the limit per IP. When it is the live code's token, a try with the new token of the replaced code, or of one of the codes it had replaced (the last 5 in all), is told as code_replaced. Any other value makes an ordinary start",
      }),
    ),
  },
  example({ email: EXAMPLE.email }),
);
const Started = Type.Object(
  {
    ok: Type.Literal(true),
    token: Type.String({
      description:
        "Send it back on verify: its tries then count against this start's code only, a dead code is told as code_dead, and after resends the code of one of the last 5 earlier mails as code_replaced",
    }),
    expiresAt: Type.String({ description: 'ISO 8601 UTC; the code is valid 10 minutes' }),
  },
  answer('A code is on its way to the address, if it can receive mail here', {
    ok: true,
    token: '3f9a0c7e5b21d84a6c0e9f13b7d52a869d41e0b26a3c5f7e2e4d1c8b0a7f3e5d9',
    expiresAt: '2026-04-22T12:10:00.000Z',
  }),
);
const VerifyBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    code: Type.String({ maxLength: 16, description: 'The 6-digit code from the mail' }),
    token: Type.Optional(
      Type.String({ maxLength: 128, description: 'The token of the start; without it, tries use a separate budget of the code' }),
    ),
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
  },
  example({ email: EXAMPLE.email, code: EXAMPLE.code }),
);
const LinkBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    link: Type.String({ maxLength: 128, description: "The `link` of the mail's sign-in link (`/signin#link=…&email=…`)" }),
    token: Type.Optional(
      Type.String({
        maxLength: 128,
        description: "The token of the start that mailed the link; without it, or with another start's, the answer is link_elsewhere",
      }),
    ),
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
  },
  example({
    email: EXAMPLE.email,
    link: 'Qm9vdHN0cmFwLWxpbmstc2VjcmV0LWV4YW1wbGUtMzJi',
    token: '3f9a0c7e5b21d84a6c0e9f13b7d52a869d41e0b26a3c5f7e2e4d1c8b0a7f3e5d9',
  }),
);

/** What signing in with an e-mail code uses. */
export interface EmailCodeRoutes {
  readonly door: SessionDoor;
  readonly emailCodes: EmailCodeService;
  readonly signIn: SignInService;
}

export function registerEmailOtpRoutes(app: TypedApp, deps: EmailCodeRoutes): void {
  app.post(
    '/api/auth/email-otp/start',
    route(
      { ...POLICY.familyCredential, extra: 'otp' },
      'email-otp',
      'Mail a 6-digit sign-in code (same answer whether or not an account exists)',
      {
        body: StartBody,
        response: { 200: Started, ...errorResponses(400, 403, 413, 429, 503) },
      },
    ),
    async (request, reply) => {
      // The token only decides which limits count the start (src/web/rate-limit.ts); a resend is a start.
      const started = await deps.emailCodes.start(request.body.email, requestLocale(request), request.body.token);
      noStore(reply);
      return { ok: true, token: started.token, expiresAt: started.expiresAt };
    },
  );

  app.post('/api/auth/email-otp/verify', signInRoute('email-otp', 'Sign in with the mailed code', VerifyBody), async (request, reply) => {
    const body = request.body;
    const add = wantsAdd(request.query, body.add);
    const issued = await deps.signIn.withEmailCode(body, await deps.door.signInTarget(request, add));
    return deps.door.answerIssued(reply, issued);
  });

  // docs/protocol.md §6 "E-mail codes": the mail's link signs in only with the token of the browser that asked.
  app.post(
    '/api/auth/email-otp/link',
    signInRoute(
      'email-otp',
      "Sign in with the mail's link, in the browser that asked for the code",
      LinkBody,
      "The link's secret and the start's token must both be the live code's: the right link without that token is 401 link_elsewhere and counts nothing (the code stays usable for typing); a link that is not the live code's is 401 code_dead.",
    ),
    async (request, reply) => {
      const body = request.body;
      const add = wantsAdd(request.query, body.add);
      const issued = await deps.signIn.withEmailLink(body, await deps.door.signInTarget(request, add));
      return deps.door.answerIssued(reply, issued);
    },
  );
}
