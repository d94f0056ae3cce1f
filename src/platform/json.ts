/**
 * The one guard for parsed JSON (and other values from outside): whether a
 * value is a plain object whose members may then be read one by one, each
 * checked for its own type. Arrays and null are not.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
