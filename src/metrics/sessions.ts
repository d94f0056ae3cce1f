/**
 * Counts successful sign-ins by path. Every sign-in path (BIP-322, e-mail
 * code, provider) ends in `SessionService.signIn` (src/session/service.ts),
 * so counting there, after the row is written, covers them all and counts
 * only sign-ins that produced a session.
 */
import { SessionService, type IssuedSession, type SessionServiceOptions, type SigningMethod } from '../session/service.js';

export class MeteredSessionService extends SessionService {
  readonly #onSignIn: (method: SigningMethod) => void;

  constructor(options: SessionServiceOptions, onSignIn: (method: SigningMethod) => void) {
    super(options);
    this.#onSignIn = onSignIn;
  }

  override async signIn(input: Parameters<SessionService['signIn']>[0]): Promise<IssuedSession> {
    const issued = await super.signIn(input);
    this.#onSignIn(input.method);
    return issued;
  }
}
