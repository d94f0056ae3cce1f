/**
 * A security key's row as src/features/passkeys stores it, with random ids
 * and key bytes, for the tests that put one in storage without a ceremony.
 */
import { randomBytes } from 'node:crypto';
import type { WebAuthnCredentialRecord } from '../../src/features/passkeys/index.js';

export function credentialRecord(
  accountId: string,
  createdAt: number,
  overrides: Partial<WebAuthnCredentialRecord> = {},
): WebAuthnCredentialRecord {
  return {
    id: randomBytes(32).toString('base64url'),
    account_id: accountId,
    public_key: randomBytes(77).toString('base64url'),
    counter: 0,
    transports: ['usb', 'nfc'],
    label: 'Key',
    authenticator_type: 'cross-platform',
    device_type: 'singleDevice',
    backed_up: false,
    user_verified: true,
    sign_in: false,
    user_handle: randomBytes(16).toString('base64url'),
    aaguid: '00000000-0000-0000-0000-000000000000',
    created_at: createdAt,
    last_used_at: null,
    ...overrides,
  };
}
