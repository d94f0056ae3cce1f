/**
 * Browser wallets that give their Bitcoin address and sign a message with
 * BIP-322. Each wallet extension injects its own object into the page; the
 * ones known here are found by the shape of that object, and everything a
 * wallet does is wrapped so that one that misbehaves costs nothing: the
 * person can always copy the message, sign it elsewhere and paste the
 * signature.
 *
 * Each wallet offers `connect()` (its addresses, the one to sign with first)
 * and `sign(message, address)` (a base64 or hex signature):
 * - UniSat (`window.unisat`): `requestAccounts()` → addresses;
 *   `signMessage(message, 'bip322-simple')`, which signs with the active
 *   account, so the account is checked first.
 * - OKX (`window.okxwallet.bitcoin`): `connect()` → `{address}`;
 *   `signMessage(message, 'bip322-simple')`, with the active account.
 * - Xverse and other Sats Connect wallets (`window.XverseProviders.BitcoinProvider`
 *   or `window.BitcoinProvider`): `request('getAccounts', {purposes})` →
 *   accounts with a `purpose`; `request('signMessage', {address, message,
 *   protocol: 'BIP322'})`. The protocol is named on purpose: for a payment
 *   address these wallets sign with ECDSA by default.
 * - Leather (`window.LeatherProvider`): `request('getAddresses')` →
 *   `{result: {addresses: [{symbol, type, address}]}}`;
 *   `request('signMessage', {message, paymentType})`.
 * - Phantom (`window.phantom.bitcoin`): `requestAccounts()` → accounts with a
 *   `purpose`; `signMessage(address, bytes)` → `{signature: bytes}`.
 */
import { busy, h, say } from './common.js';
import { t } from './i18n.js';

/**
 * @typedef {object} Wallet
 * @property {string} id
 * @property {string} label
 * @property {() => Promise<string[]>} connect the wallet's addresses, the one to sign in with first
 * @property {(message: string, address: string) => Promise<string>} sign the signature, base64 or hex
 * @property {string} [icon] the picture the wallet gives of itself, as a data: URL
 */

/** The wallet's active account is not the address the message names. */
export class WrongAccountError extends Error {
  code = 'wrong_account';

  /**
   * @param {string} label
   * @param {string} wanted
   * @param {string} active
   */
  constructor(label, wanted, active) {
    super(`${label} is using ${active}, not ${wanted}.`);
    this.name = 'WrongAccountError';
    this.wanted = wanted;
    this.active = active;
  }
}

/**
 * The answer of a JSON-RPC style `request`: its result, or the error it carries as an Error (with the error's `code`).
 *
 * @param {any} answer what the wallet answered, of no shape it promises
 * @param {string} label
 */
function resultOf(answer, label) {
  if (answer?.error) {
    const error = answer.error;
    const failure = new Error(typeof error === 'string' ? error : error.message || `${label} refused`);
    if (typeof error === 'object' && error !== null && 'code' in error) throw Object.assign(failure, { code: error.code });
    throw failure;
  }
  if (answer && typeof answer === 'object' && 'result' in answer) return answer.result;
  return answer;
}

/**
 * The signature in a wallet's answer: the answer itself, its result, or the result's `signature`.
 *
 * @param {any} answer what the wallet answered
 * @param {string} label
 * @returns {string}
 */
function signatureOf(answer, label) {
  if (typeof answer === 'string' && answer !== '') return answer;
  const result = resultOf(answer, label);
  if (typeof result === 'string' && result !== '') return result;
  if (result && typeof result.signature === 'string' && result.signature !== '') return result.signature;
  throw new Error(`${label} gave no signature.`);
}

/**
 * Payment (segwit) addresses first: they are what people sign in with; ordinals (taproot) after.
 *
 * @param {unknown} accounts the wallet's accounts, each with an `address` and a `purpose`
 * @returns {string[]}
 */
function byPurpose(accounts) {
  const list = Array.isArray(accounts) ? accounts.filter((account) => account && typeof account.address === 'string') : [];
  /** @param {{purpose?: unknown}} account */
  const rank = (account) => (account.purpose === 'payment' ? 0 : account.purpose === 'ordinals' ? 1 : 2);
  return [...list].sort((a, b) => rank(a) - rank(b)).map((account) => account.address);
}

/** @param {Uint8Array} bytes */
function bytesToBase64(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * UniSat and OKX sign with their active account: make sure it is `address`.
 *
 * @param {string} label
 * @param {string | undefined} active the wallet's active account, when it says
 * @param {string} address
 */
async function checkActive(label, active, address) {
  if (active !== undefined && active !== address) throw new WrongAccountError(label, address, active);
}

/** @returns {Wallet[]} the wallets this page can see now */
export function detectWallets() {
  /** @type {Wallet[]} */
  const found = [];
  const scope = /** @type {any} */ (window);
  /**
   * @param {() => any} find the wallet's injected object, when the page has one
   * @param {string[]} methods what the object must offer, as functions, to be that wallet
   * @param {(injected: any) => Wallet} make
   */
  const tryAdd = (find, methods, make) => {
    try {
      const injected = find();
      if (injected && methods.every((method) => typeof injected[method] === 'function')) {
        // A wallet may carry its own picture; only an inline image is taken (the page loads none from another host).
        const icon =
          typeof injected.icon === 'string' && /^data:image\/(png|svg\+xml|webp);base64,/.test(injected.icon) ? injected.icon : undefined;
        found.push({ ...make(injected), icon });
      }
    } catch {
      // a wallet object that throws on access is ignored
    }
  };
  tryAdd(
    () => scope.unisat,
    ['signMessage', 'requestAccounts'],
    (unisat) => ({
      id: 'unisat',
      label: 'UniSat',
      connect: async () =>
        (await unisat.requestAccounts()).filter(/** @param {unknown} address */ (address) => typeof address === 'string'),
      sign: async (message, address) => {
        await checkActive('UniSat', (await unisat.requestAccounts())[0], address);
        return signatureOf(await unisat.signMessage(message, 'bip322-simple'), 'UniSat');
      },
    }),
  );
  tryAdd(
    () => scope.okxwallet?.bitcoin,
    ['signMessage', 'connect'],
    (okx) => ({
      id: 'okx',
      label: 'OKX Wallet',
      connect: async () => {
        const connected = await okx.connect();
        return connected && typeof connected.address === 'string' ? [connected.address] : [];
      },
      sign: async (message, address) => {
        const connected = await okx.connect();
        await checkActive('OKX Wallet', connected?.address, address);
        return signatureOf(await okx.signMessage(message, 'bip322-simple'), 'OKX Wallet');
      },
    }),
  );
  tryAdd(
    () => scope.XverseProviders?.BitcoinProvider || scope.BitcoinProvider,
    ['request'],
    (satsConnect) => ({
      id: 'xverse',
      label: 'Xverse',
      connect: async () =>
        byPurpose(
          resultOf(
            await satsConnect.request('getAccounts', { purposes: ['payment', 'ordinals'], message: t('wallet.accounts_prompt') }),
            'Xverse',
          ),
        ),
      sign: async (message, address) =>
        signatureOf(await satsConnect.request('signMessage', { address, message, protocol: 'BIP322' }), 'Xverse'),
    }),
  );
  tryAdd(
    () => scope.LeatherProvider,
    ['request'],
    (leather) => {
      const addresses = async () => {
        const result = resultOf(await leather.request('getAddresses'), 'Leather');
        /** @type {any[]} Leather's own entries, checked one by one */
        const list = result && Array.isArray(result.addresses) ? result.addresses : [];
        const bitcoin = list.filter((entry) => entry && entry.symbol === 'BTC' && typeof entry.address === 'string');
        /** @param {{type?: unknown}} entry */
        const rank = (entry) => (entry.type === 'p2wpkh' ? 0 : 1);
        return [...bitcoin].sort((a, b) => rank(a) - rank(b)).map((entry) => entry.address);
      };
      return {
        id: 'leather',
        label: 'Leather',
        connect: addresses,
        sign: async (message, address) => {
          const held = await addresses();
          if (held.length > 0 && !held.includes(address)) throw new WrongAccountError('Leather', address, held[0]);
          const paymentType = /^(bc1p|tb1p|bcrt1p)/i.test(address) ? 'p2tr' : 'p2wpkh';
          return signatureOf(await leather.request('signMessage', { message, paymentType }), 'Leather');
        },
      };
    },
  );
  tryAdd(
    () => scope.phantom?.bitcoin,
    ['signMessage', 'requestAccounts'],
    (phantom) => ({
      id: 'phantom',
      label: 'Phantom',
      connect: async () => byPurpose(await phantom.requestAccounts()),
      sign: async (message, address) => {
        const answer = await phantom.signMessage(address, new TextEncoder().encode(message));
        const signature = answer?.signature;
        if (!(signature instanceof Uint8Array) || signature.length === 0) throw new Error('Phantom gave no signature.');
        return bytesToBase64(signature);
      },
    }),
  );
  return found;
}

/**
 * Why a wallet call failed, in words. Wallets reject with an Error, a string
 * or `{code, message}`; 4001 is the EIP-1193 "user rejected" code several
 * Bitcoin wallets use too.
 *
 * @param {unknown} error
 * @param {string} label
 */
export function walletErrorText(error, label) {
  if (error instanceof WrongAccountError) return t('wallet.wrong_account', { wallet: label, active: error.active, wanted: error.wanted });
  const text =
    typeof error === 'string'
      ? error
      : error && typeof error === 'object' && 'message' in error && typeof error.message === 'string'
        ? error.message
        : '';
  const code = error && typeof error === 'object' && 'code' in error ? error.code : undefined;
  if (code === 4001 || code === -32000 || /reject|denied|declin|cancel/i.test(text)) return t('wallet.declined', { wallet: label });
  return text ? t('wallet.failed_because', { wallet: label, reason: text }) : t('wallet.failed', { wallet: label });
}

/**
 * The wallet's logo: the picture it gives of itself, else a small one among
 * the page's own assets (the page's policy loads no image from another host).
 *
 * @param {Wallet} wallet
 */
export function walletLogo(wallet) {
  return wallet.icon ?? `/assets/wallet-${wallet.id}.svg`;
}

/**
 * Appends to `tools` a "Sign with …" button for each wallet this page can see,
 * each running `sign` with its wallet while the button is busy.
 * @param {HTMLElement} tools
 * @param {(wallet: Wallet) => Promise<void>} sign
 */
export function appendWalletButtons(tools, sign) {
  for (const wallet of detectWallets()) {
    const button = h('button', {
      type: 'button',
      class: 'secondary',
      'data-wallet': wallet.id,
      text: t('wallet.sign_with', { wallet: wallet.label }),
    });
    button.addEventListener('click', () => busy(button, () => sign(wallet)));
    tools.append(button);
  }
}

/**
 * Puts the signature `wallet` makes of the challenge into `signature` and
 * submits `form`; a refusal or failure is said in `region` instead.
 * @param {Wallet} wallet
 * @param {{address: string, message: string}} challenge
 * @param {HTMLTextAreaElement} signature
 * @param {HTMLFormElement} form
 * @param {HTMLElement} region
 */
export async function signIntoForm(wallet, challenge, signature, form, region) {
  try {
    signature.value = await wallet.sign(challenge.message, challenge.address);
  } catch (failure) {
    say(region, walletErrorText(failure, wallet.label));
    return;
  }
  form.requestSubmit();
}
