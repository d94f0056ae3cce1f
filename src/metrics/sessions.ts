/**
 * Counts successful sign-ins by path. Every sign-in path (BIP-322, e-mail
 * code, provider, passkey) ends in `SessionService.signIn`
 * (src/session/service.ts), so counting there, after the row is written,
 * covers them all and counts only sign-ins that produced a session. The hook
 * also gets the sign-in and its session, for the activity log.
 */
import { SessionService, type IssuedSession, type SessionServiceOptions } from '../session/service.js';

type SignInInput = Parameters<SessionService['signIn']>[0];

export class MeteredSessionService extends SessionService {
  readonly #onSignIn: (input: SignInInput, issued: IssuedSession) => void | Promise<void>;

  constructor(options: SessionServiceOptions, onSignIn: (input: SignInInput, issued: IssuedSession) => void | Promise<void>) {
    super(options);
    this.#onSignIn = onSignIn;
  }

  override async signIn(input: Parameters<SessionService['signIn']>[0]): Promise<IssuedSession> {
    const issued = await super.signIn(input);
    await this.#onSignIn(input, issued);
    return issued;
  }
}
