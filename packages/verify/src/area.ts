/** Prefix of every error message of this package (docs/architecture.md: messages start with their area). */
export const AREA = '@oc-host/verify';
