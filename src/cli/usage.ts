import { parseArgs, type ParseArgsConfig } from 'node:util';

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
