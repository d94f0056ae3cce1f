/**
 * English: the words of the wallet pages (src/features/wallet/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const walletPagesEn = {
  // Sign-in page (signin.js)
  'signin.wallet_check':
    'Check your wallet… {wallet} asks you to share your address and sign a short message. This proves the address is yours and costs nothing.',
  'page.address_refused': 'That is not a Bitcoin address this service accepts. Check it and try again.',
  'signin.message_ready': 'Message ready. Sign it with your wallet, then paste the signature.',
  'signin.message_one_minute': 'One minute left to sign the message.',
  'signin.message_expires_in': 'Expires in {clock}.',
  'signin.message_expired': 'This message has expired.',
  'signin.message_expired_unsigned': 'The message has expired before it was signed. Get a new one and sign that.',
  'signin.message_expires_at': 'It expires at {time}.',
  'signin.wallet_signed': '{wallet} signed as {address}. Signing in…',
  'wallet.sign_with': 'Sign with {wallet}',
  'wallet.address_refused': "{wallet}'s address {address} is not one this service accepts.",
  'wallet.connect': 'Connect {wallet}',
  'signin.new_message_ready': 'A new message is ready to sign.',
  'signin.legacy_wallet':
    '{wallet} signed with the legacy method (ECDSA), which only works for addresses starting with 1. Choose BIP-322 in its signing options and sign again.',
  'signin.legacy_pasted':
    'Your wallet signed with the legacy method (ECDSA), which only works for addresses starting with 1. Choose BIP-322 in its signing options and sign again.',
  'signin.mismatch_wallet':
    "{wallet}'s signature does not match: it may have signed with another account, or changed the message. Check the account in {wallet} and sign again.",
  'signin.mismatch_pasted':
    'The signature does not match. Sign the exact message shown, every line of it, including the empty last line some wallets drop, with the wallet that holds this address, using BIP-322.',
  // Wallets (wallets.js) and security keys (passkeys.js)
  'wallet.wrong_account': '{wallet} is using {active}, not {wanted}. Switch to {wanted} in {wallet}, or start again with {active}.',
  'wallet.declined': 'You declined in {wallet}, so nothing was signed.',
  'wallet.failed_because': '{wallet} could not sign: {reason}',
  'wallet.failed': '{wallet} could not sign. Copy the message and sign it another way.',
  // API explorer (explorer.js); the routes themselves are described in English by the OpenAPI document
  'wallet.accounts_prompt': 'Sign in with your Bitcoin address',
} as const;

export type WalletPageMessageKey = keyof typeof walletPagesEn;
