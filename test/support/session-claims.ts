/** Every claim docs/protocol.md §3 allows in a session JWT, in the order the service writes them. */
export const SESSION_CLAIMS: readonly string[] = [
  'iss',
  'sub',
  'did_oc',
  'jti',
  'iat',
  'exp',
  'name',
  'primary_btc',
  'display_identity',
  'signing_method',
  'amr',
  'step_up_at',
  'sudo_at',
  'merged_from',
];
