// A consumer page's OrangeCheck session client, as the tests drive it in
// Chromium (test/client-flows.test.ts). It does in a page what the OrangeCheck
// client's provider and hooks are documented to do, so that the host's side
// of every flow is exercised by a real browser: the per-tab pin in
// sessionStorage (`oc_tab_session`, `{token, didOc}`), the `x-oc-tab-session`
// header on every call to this origin and to the auth host, `refresh()` that
// drops a pin the me endpoint answers 401 for and pins again from the cookie,
// the `#oc-adopt` marker after a ceremony on the host, a switch that pins the
// tab to the token the host answers, and a key step-up that re-reads the
// session afterwards. It is this project's own code, written from those
// documented behaviours; the wire facts it relies on are listed in
// docs/integrating.md "Using the OrangeCheck client libraries".

const PIN_KEY = 'oc_tab_session';
const PIN_HEADER = 'x-oc-tab-session';
const ADOPT_MARKER = '#oc-adopt';

function readPin() {
  try {
    const raw = sessionStorage.getItem(PIN_KEY);
    const pin = raw === null ? null : JSON.parse(raw);
    return pin !== null && typeof pin.token === 'string' && typeof pin.didOc === 'string' ? pin : null;
  } catch {
    return null;
  }
}

function writePin(pin) {
  sessionStorage.setItem(PIN_KEY, JSON.stringify(pin));
}

function clearPin() {
  sessionStorage.removeItem(PIN_KEY);
}

function base64urlToBytes(text) {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
}

function bytesToBase64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function credentialDescriptors(list) {
  return (list ?? []).map((item) => ({ ...item, id: base64urlToBytes(item.id) }));
}

/** A WebAuthn credential as the host's JSON bodies carry it (WebAuthn L3 toJSON shape). */
function credentialJson(credential) {
  const response = {};
  for (const field of ['clientDataJSON', 'attestationObject', 'authenticatorData', 'signature', 'userHandle']) {
    const value = credential.response[field];
    if (value instanceof ArrayBuffer) response[field] = bytesToBase64url(value);
  }
  if (typeof credential.response.getTransports === 'function') response.transports = credential.response.getTransports();
  return {
    id: credential.id,
    rawId: bytesToBase64url(credential.rawId),
    type: credential.type,
    response,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
}

export function createClient({ authOrigin, mePath }) {
  const state = { account: null, status: 'loading', pinned: false };
  const nativeFetch = window.fetch.bind(window);

  // The interceptor: a pinned tab speaks as its account to this origin and to the host.
  window.fetch = (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.url, location.href);
    const pin = readPin();
    if (pin !== null && (url.origin === location.origin || url.origin === authOrigin)) {
      const headers = new Headers(init.headers ?? {});
      if (!headers.has('authorization') && !headers.has(PIN_HEADER)) headers.set(PIN_HEADER, pin.token);
      return nativeFetch(input, { ...init, headers });
    }
    return nativeFetch(input, init);
  };

  /** A call as the client makes it: with the browser's cookies, except to the public primitives (`credentials: 'omit'`). */
  async function call(url, method = 'GET', body, credentials = 'include') {
    const response = await fetch(url, {
      method,
      credentials,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    let json = null;
    try {
      json = await response.json();
    } catch {
      json = null;
    }
    return { status: response.status, body: json };
  }

  async function pinThisTab(didOc) {
    if (readPin() !== null) return;
    // The pin is asked for without a pin header: the cookie's account.
    const response = await nativeFetch(`${authOrigin}/api/auth/tab`, {
      method: 'POST',
      credentials: 'include',
      headers: { accept: 'application/json' },
    });
    if (!response.ok) return;
    const body = await response.json();
    if (body.ok === true && typeof body.token === 'string' && body.account?.did_oc === didOc) {
      writePin({ token: body.token, didOc });
      state.pinned = true;
    }
  }

  async function refresh() {
    let pin = readPin();
    let me = await call(mePath);
    if (me.status === 401 && pin !== null) {
      clearPin();
      pin = null;
      me = await call(mePath);
    }
    if (me.status === 401) {
      Object.assign(state, { account: null, status: 'anonymous', pinned: false });
      return state;
    }
    const didOc = me.body?.account?.did_oc ?? null;
    if (didOc !== null && pin !== null && pin.didOc !== didOc) {
      clearPin();
      pin = null;
    }
    Object.assign(state, {
      account: me.body?.account ?? null,
      status: didOc === null ? 'anonymous' : 'authenticated',
      pinned: pin !== null,
    });
    // As the client does: the pin is asked for without waiting, so a call made
    // right after refresh() may still go out unpinned (on the cookie).
    if (didOc !== null && pin === null) void pinThisTab(didOc);
    return state;
  }

  async function switchAccount(didOc) {
    const switched = await call(`${authOrigin}/api/auth/switch`, 'POST', { did_oc: didOc });
    if (switched.status !== 200) throw new Error(`switch failed: ${switched.body?.reason ?? switched.status}`);
    if (typeof switched.body.token === 'string') writePin({ token: switched.body.token, didOc: switched.body.account.did_oc });
    return refresh();
  }

  async function registerKey() {
    const options = await call(`${authOrigin}/api/auth/webauthn/register/options`, 'POST', {});
    if (options.status !== 200) return options;
    const publicKey = options.body.options;
    const credential = await navigator.credentials.create({
      publicKey: {
        ...publicKey,
        challenge: base64urlToBytes(publicKey.challenge),
        user: { ...publicKey.user, id: base64urlToBytes(publicKey.user.id) },
        excludeCredentials: credentialDescriptors(publicKey.excludeCredentials),
      },
    });
    return call(`${authOrigin}/api/auth/webauthn/register/verify`, 'POST', {
      challenge_token: options.body.challenge_token,
      response: credentialJson(credential),
    });
  }

  async function stepUp(purpose) {
    const options = await call(`${authOrigin}/api/auth/webauthn/assertion/options`, 'POST', { purpose });
    if (options.status !== 200) return { ok: false, reason: options.body?.reason };
    const publicKey = options.body.options;
    const credential = await navigator.credentials.get({
      publicKey: {
        ...publicKey,
        challenge: base64urlToBytes(publicKey.challenge),
        allowCredentials: credentialDescriptors(publicKey.allowCredentials),
      },
    });
    const verified = await call(`${authOrigin}/api/auth/webauthn/assertion/verify`, 'POST', {
      challenge_token: options.body.challenge_token,
      response: credentialJson(credential),
    });
    if (verified.status !== 200 || typeof verified.body?.step_up_at !== 'number') return { ok: false, reason: verified.body?.reason };
    // The hook reads only step_up_at, then re-reads the session.
    await refresh();
    return { ok: true, step_up_at: verified.body.step_up_at };
  }

  async function start() {
    // After a ceremony on the host, this tab takes up the account just proven.
    if (location.hash === ADOPT_MARKER) {
      clearPin();
      history.replaceState(null, '', location.pathname + location.search);
    }
    return refresh();
  }

  return { state, start, refresh, switchAccount, registerKey, stepUp, call, pin: readPin };
}
