/** Reading the errors the service throws. */
import { expect } from 'vitest';
import { OcError } from '../../src/platform/errors.js';

/** The error of class `type` that `promise` rejects with; the test fails if it resolves or rejects with anything else. */
export async function failureOf<E extends Error>(type: abstract new (...args: never[]) => E, promise: Promise<unknown>): Promise<E> {
  const outcome = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(outcome).toBeInstanceOf(type);
  return outcome as E;
}

/** The OcError `promise` rejects with; the test fails if it resolves or rejects with anything else. */
export function ocFailure(promise: Promise<unknown>): Promise<OcError> {
  return failureOf(OcError, promise);
}
