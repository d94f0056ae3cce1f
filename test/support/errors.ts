/** Reading the errors the service throws. */
import { expect } from 'vitest';
import { OcError } from '../../src/errors.js';

/** The OcError `promise` rejects with; the test fails if it resolves or rejects with anything else. */
export async function ocFailure(promise: Promise<unknown>): Promise<OcError> {
  const outcome = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(outcome).toBeInstanceOf(OcError);
  return outcome as OcError;
}
