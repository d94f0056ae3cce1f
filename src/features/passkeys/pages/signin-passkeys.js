/**
 * Signing in with a passkey (src/pages/signin.js, docs/protocol.md §6
 * "Security keys and passkeys"): where the browser offers passkeys in a
 * field's autofill (conditional mediation), the e-mail field lists them as
 * soon as the page loads; the link asks with the browser's own prompt, and
 * cancels the waiting autofill request first.
 */
import { api, busy, byId, say, t } from './common.js';
import { browserErrorText, conditionalSupported, describeKeyError, getAssertion, wasCancelled, webauthnSupported } from './passkeys.js';
import { addQuery, done } from './signin-state.js';

const passkeyError = byId('passkey-error');
/** @type {AbortController | null} The waiting autofill request, cancelled when the person presses the button. */
let autofill = null;

/**
 * One passkey sign-in: options, the browser's prompt (or its autofill), then
 * POST /api/auth/passkey/signin. True when it signed in.
 *
 * @param {{mediation?: 'conditional', signal?: AbortSignal}} how
 */
async function passkeySignIn(how) {
  const started = await api('POST', '/api/auth/passkey/options');
  if (started.code === 'webauthn_unavailable') {
    // This host's address cannot carry passkeys (docs/protocol.md §6): leave the way out.
    byId('passkey').hidden = true;
    return false;
  }
  if (!started.ok) {
    say(passkeyError, describeKeyError(started));
    return false;
  }
  const response = await getAssertion(started.body.options, how);
  const signedIn = await api('POST', `/api/auth/passkey/signin${addQuery()}`, { challenge_token: started.body.challenge_token, response });
  if (signedIn.ok) {
    done('passkey');
    return true;
  }
  say(passkeyError, describeKeyError(signedIn, { credential_outside_allowlist: t('signin.passkey_not_allowed') }));
  return false;
}

async function waitForAutofill() {
  if (!(await conditionalSupported())) return;
  autofill = new AbortController();
  try {
    await passkeySignIn({ mediation: 'conditional', signal: autofill.signal });
  } catch (failure) {
    // Aborted by the button, or the browser gave up: the other ways stay.
    if (!wasCancelled(failure)) say(passkeyError, browserErrorText(failure));
  }
}

export function setUpPasskeys() {
  if (!webauthnSupported()) return;
  byId('passkey').hidden = false;
  const button = /** @type {HTMLButtonElement} */ (byId('passkey-button'));
  button.addEventListener('click', () =>
    busy(button, async () => {
      say(passkeyError, '');
      autofill?.abort();
      autofill = null;
      try {
        await passkeySignIn({});
      } catch (failure) {
        say(passkeyError, browserErrorText(failure));
      }
    }),
  );
  void waitForAutofill();
}
