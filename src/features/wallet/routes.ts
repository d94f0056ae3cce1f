/**
 * Signing in with a Bitcoin wallet (docs/api.md "Session endpoints",
 * docs/protocol.md §5): POST /api/auth/signin with a BIP-322 signature of a
 * `purpose=login` challenge from GET /api/challenge. The proof is checked by
 * the identity core (src/identity/signin) and ends in the one sign-in door.
 * Thin: a schema, one domain call, a reply.
 */
import { Type } from 'typebox';
import { OcError } from '../../platform/errors.js';
import type { SignInService } from '../../identity/account/index.js';
import { wantsAdd, type SessionDoor } from '../../web/session.js';
import { EXAMPLE, example } from '../../platform/http/schemas.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { signInRoute } from '../../web/route.js';

const SignInBody = Type.Object(
  {
    address: Type.Optional(Type.String({ maxLength: 128, description: 'Bitcoin address (docs/api.md body)' })),
    message: Type.String({ minLength: 1, maxLength: 4096, description: 'The challenge message from GET /api/challenge?purpose=login' }),
    signature: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'BIP-322 signature (base64 or hex), or legacy signmessage for P2PKH',
    }),
    nonce: Type.Optional(Type.String({ maxLength: 64 })),
    scheme: Type.Optional(Type.String({ maxLength: 16 })),
    expectedNonce: Type.Optional(Type.String({ maxLength: 64, description: 'Alternative body shape sent by existing client libraries' })),
    expectedAudience: Type.Optional(Type.String({ maxLength: 512 })),
    expectedPurpose: Type.Optional(Type.String({ maxLength: 64 })),
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
  },
  {
    description:
      '`{address, message, signature, nonce}`, or `{message, signature, scheme, expectedNonce, expectedAudience, expectedPurpose, add}`',
    ...example({ address: EXAMPLE.address, message: EXAMPLE.challenge, signature: EXAMPLE.attestation.signature, nonce: EXAMPLE.nonce }),
  },
);

/** What the wallet's sign-in uses. */
export interface WalletRoutes {
  readonly door: SessionDoor;
  readonly signIn: SignInService;
}

export function registerWalletRoutes(app: TypedApp, deps: WalletRoutes): void {
  app.post(
    '/api/auth/signin',
    signInRoute('auth', 'Sign in with a BIP-322 signed challenge (purpose=login)', SignInBody),
    async (request, reply) => {
      const body = request.body;
      const query = request.query;
      const nonce = body.nonce ?? body.expectedNonce;
      if (nonce === undefined) throw new OcError('bad_request', 'body.nonce: required (or expectedNonce)');
      const target = await deps.door.signInTarget(request, wantsAdd(query, body.add));
      const issued = await deps.signIn.withAddress(
        {
          message: body.message,
          signature: body.signature,
          nonce,
          address: body.address,
          scheme: body.scheme,
          expectedAudience: body.expectedAudience,
          expectedPurpose: body.expectedPurpose,
        },
        target,
      );
      return deps.door.answerIssued(reply, issued);
    },
  );
}
