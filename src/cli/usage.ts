import { parseArgs, type ParseArgsConfig } from 'node:util';
import { accountIdFromDid } from '../identity/session/index.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** A command line the CLI does not understand: exit 2 with the usage text. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/** The options every operator command takes: its help, `--yes` for a confirmation, `--json` for the answer. */
const COMMAND_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  yes: { type: 'boolean', short: 'y' },
  json: { type: 'boolean' },
} as const satisfies OptionsConfig;

type CommandLine<T extends OptionsConfig> = { args: string[]; allowPositionals: true; options: typeof COMMAND_OPTIONS & T };

/** Parses an operator command's argv: positionals, {@link COMMAND_OPTIONS} and the command's own `options`. */
export function parseCommandLine<T extends OptionsConfig>(
  argv: readonly string[],
  options: T,
): ReturnType<typeof parseArgs<CommandLine<T>>> {
  return parseArgs<CommandLine<T>>({
    args: [...argv],
    allowPositionals: true,
    options: { ...COMMAND_OPTIONS, ...options },
  });
}

/** A time as the commands print it: ISO 8601, or `-` for none. */
export function iso(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

/** The account id of a `did:oc` argument (the `did:oc:` prefix may be left out); a usage error for anything else. */
export function didArgument(value: string | undefined, what: string): string {
  if (value === undefined) throw new UsageError(`${what}: a did (did:oc:<32 hex>) is required`);
  const id = accountIdFromDid(value.startsWith('did:oc:') ? value : `did:oc:${value}`);
  if (id === null) throw new UsageError(`${what}: "${value}" is not a did (did:oc:<32 hex>)`);
  return id;
}
