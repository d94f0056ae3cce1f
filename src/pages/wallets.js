/**
 * Browser wallets that sign a message with BIP-322, best effort. Each wallet
 * extension injects its own object into the page; only a few common ones are
 * known here, and everything a wallet does is wrapped so that a wallet that
 * misbehaves costs nothing: the person can always copy the message, sign it
 * elsewhere and paste the signature.
 *
 * Known:
 * - UniSat (`window.unisat`) and OKX (`window.okxwallet.bitcoin`):
 *   `requestAccounts()`, then `signMessage(message, 'bip322-simple')` → base64.
 * - Xverse and other sats-connect wallets (`window.XverseProviders.BitcoinProvider`
 *   or `window.BitcoinProvider`): JSON-RPC `request('signMessage', {address,
 *   message, protocol: 'BIP322'})` → `{result: {signature}}`.
 * - Leather (`window.LeatherProvider`): `request('signMessage', {message,
 *   paymentType})` → `{result: {signature}}`.
 */

/**
 * @typedef {object} Wallet
 * @property {string} id
 * @property {string} label
 * @property {(message: string, address: string) => Promise<string>} sign the signature, base64
 */

/** @returns {Wallet[]} the wallets this page can see now */
export function detectWallets() {
  /** @type {Wallet[]} */
  const found = [];
  const scope = /** @type {any} */ (window);
  try {
    if (scope.unisat && typeof scope.unisat.signMessage === 'function') {
      found.push({ id: 'unisat', label: 'UniSat', sign: (message, address) => signWithAccounts(scope.unisat, 'UniSat', message, address) });
    }
  } catch {
    // a wallet object that throws on access is ignored
  }
  try {
    const okx = scope.okxwallet && scope.okxwallet.bitcoin;
    if (okx && typeof okx.signMessage === 'function') {
      found.push({ id: 'okx', label: 'OKX Wallet', sign: (message, address) => signWithAccounts(okx, 'OKX Wallet', message, address) });
    }
  } catch {
    // ignored, as above
  }
  try {
    const satsConnect = (scope.XverseProviders && scope.XverseProviders.BitcoinProvider) || scope.BitcoinProvider;
    if (satsConnect && typeof satsConnect.request === 'function') {
      found.push({
        id: 'xverse',
        label: 'Xverse',
        sign: async (message, address) =>
          signatureOf(await satsConnect.request('signMessage', { address, message, protocol: 'BIP322' }), 'Xverse'),
      });
    }
  } catch {
    // ignored, as above
  }
  try {
    const leather = scope.LeatherProvider;
    if (leather && typeof leather.request === 'function') {
      found.push({
        id: 'leather',
        label: 'Leather',
        sign: async (message, address) => {
          const paymentType = /^(bc1p|tb1p|bcrt1p)/i.test(address) ? 'p2tr' : 'p2wpkh';
          return signatureOf(await leather.request('signMessage', { message, paymentType }), 'Leather');
        },
      });
    }
  } catch {
    // ignored, as above
  }
  return found;
}

/** UniSat-style: connect, make sure the wallet's account is the address asked for, sign. */
async function signWithAccounts(wallet, label, message, address) {
  if (typeof wallet.requestAccounts === 'function') {
    const accounts = await wallet.requestAccounts();
    if (Array.isArray(accounts) && accounts.length > 0 && !accounts.includes(address)) {
      throw new Error(`${label} is using another address (${accounts[0]}). Switch to ${address} in ${label}, or enter the wallet's address.`);
    }
  }
  return signatureOf(await wallet.signMessage(message, 'bip322-simple'), label);
}

function signatureOf(answer, label) {
  if (typeof answer === 'string' && answer !== '') return answer;
  if (answer && answer.error) {
    const text = typeof answer.error === 'string' ? answer.error : answer.error.message;
    throw new Error(`${label}: ${text || 'the wallet refused to sign'}`);
  }
  const result = answer && (answer.result ?? answer);
  if (result && typeof result.signature === 'string' && result.signature !== '') return result.signature;
  throw new Error(`${label} gave no signature.`);
}

/**
 * Why a wallet call failed, in words. Wallets reject with an Error, a string
 * or `{code, message}`.
 *
 * @param {unknown} error
 */
export function walletErrorText(error) {
  const text =
    typeof error === 'string'
      ? error
      : error && typeof error === 'object' && 'message' in error && typeof error.message === 'string'
        ? error.message
        : '';
  if (/reject|denied|cancel/i.test(text)) return 'The wallet did not sign (the request was declined).';
  return text ? `The wallet could not sign: ${text}` : 'The wallet could not sign. Copy the message and sign it another way.';
}
