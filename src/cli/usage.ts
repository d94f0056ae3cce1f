/** A command line the CLI does not understand: exit 2 with the usage text. */
export class UsageError extends Error {
  readonly code = 'usage';
}
