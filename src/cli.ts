#!/usr/bin/env node
/**
 * The `oc-host` command line: serve, migrate, keys, and the attestation
 * tools (docs/operations.md "Command line"). Exit codes: 0 success, 1 the
 * work failed (an attestation that does not verify, a publish no relay
 * took), 2 usage error (an argument or option the command does not take
 * too), 78 bad configuration (a DATABASE_URL naming no database too: only
 * `migrate` and `serve` create one).
 */
import { parseArgs } from 'node:util';
import { hexToBytes } from '@noble/hashes/utils.js';
import { checkResultBody, parseSubject, verifyAttestation } from './features/attestations/index.js';
import { buildChain, buildRelayPool } from './services.js';
import { buildAttestationLookup } from './features/attestations/index.js';
import { backchannelUriChecker } from './features/oidc/index.js';
import { isDevelopmentUrl } from './features/connect/index.js';
import { readAttestationFile } from './cli/attestation-file.js';
import { publishFromFile } from './cli/publish.js';
import { UsageError } from './cli/usage.js';
import { OPERATOR_COMMANDS, operatorHelp, runOperatorCommand, terminalIo } from './cli/operator.js';
import { OIDC_HELP, runOidcCommand } from './cli/oidc.js';
import { ensureOidcKeys, listOidcKeys, OIDC_ALGORITHMS, OidcService, rotateOidcKeys, type OidcAlgorithm } from './features/oidc/index.js';
import { ConfigError, loadConfig, type Config } from './platform/config.js';
import { serve } from './main.js';
import { publicJwkForConsumers, loadKeyRing, loadServerSecret, rotateSigningKey, sessionKeyStates } from './identity/session/index.js';
import { DatabaseMissingError, redactDatabaseUrl } from './platform/storage/index.js';
import { migrate, openStore } from './store.js';
import { VERSION } from './platform/version.js';

const USAGE = `oc-host ${VERSION}: sign-in host and OrangeCheck attestation verifier

Usage:
  oc-host serve                      run the service (same as npm start)
  oc-host migrate                    apply database migrations and exit
  oc-host keys rotate                add a new session signing key; older keys stay
                                     published for the overlap window (31 days)
  oc-host keys rotate --oidc [--alg RS256|ES256|EdDSA]
                                     new OpenID provider keys (one per algorithm, or the
                                     one named); replaced keys stay published 7 days
  oc-host keys list                  every session and OpenID provider key and its state
  oc-host keys public [--base64url]  print the active public JWK for consumers'
                                     OC_AUTH_PUBLIC_JWK setting
  oc-host check --addr A | --id ID | --identity PROTO:ID [--min-sats N] [--min-days N]
                                     look the subject up on the Nostr relays and answer
                                     the threshold question (like GET /api/check)
  oc-host verify --file FILE         verify an attestation {addr, msg, sig, scheme?}
                                     with chain metrics (like POST /api/verify)
  oc-host publish --file FILE        verify and publish an attestation to the
                                     configured Nostr relays
  oc-host accounts show|disable|enable|delete ...
                                     inspect, lock or delete an account (--help for more)
  oc-host sessions revoke --account DID
                                     sign an account out of every browser
  oc-host activity --account DID [--json]
                                     an account's security events
  oc-host operators add|remove|list|tokens|audit ...
                                     who may operate, their API tokens, the audit log
                                     (--help for more)
  oc-host oidc clients add|list|show|rotate-secret|first-party|remove ...
                                     the OpenID provider's registered apps (--help for more)
  oc-host --help | --version

Configuration comes from the environment (see docs/configuration.md).
Only serve and migrate create a database; other commands refuse a missing one (78).
Exit codes: 0 ok, 1 the work failed, 2 usage error, 3 not confirmed, 78 bad configuration.`;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function withStore<T>(config: Config, work: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  progress(`opening ${redactDatabaseUrl(config.databaseUrl)}`);
  // Only migrate and serve create a database: a mistyped DATABASE_URL is refused, not answered from an empty one.
  const store = await openStore(config.databaseUrl, { sqliteDriver: config.sqliteDriver, mustExist: true });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * Refuses positionals past the `expected` first ones and options `command`
 * does not take: a word the command would ignore is most likely a mistake,
 * so nothing runs (docs/operations.md "Command line").
 */
function onlyArguments(
  command: string,
  positionals: readonly string[],
  expected: number,
  values: Readonly<Record<string, unknown>>,
  options: readonly string[],
): void {
  const extra = positionals.slice(expected);
  if (extra.length > 0) throw new UsageError(`${command}: unexpected "${extra.join(' ')}"`);
  const stray = Object.keys(values).filter((name) => values[name] !== undefined && !options.includes(name));
  if (stray.length > 0) throw new UsageError(`${command}: unexpected ${stray.map((name) => `--${name}`).join(' ')}`);
}

function wholeNumber(value: string | undefined, flag: string): number {
  if (value === undefined) return 0;
  if (!/^[0-9]{1,15}$/.test(value)) throw new UsageError(`${flag} must be a whole number`);
  return Number(value);
}

async function run(argv: string[]): Promise<number> {
  if ((OPERATOR_COMMANDS as readonly string[]).includes(argv[0] ?? '')) {
    const help = operatorHelp(argv);
    if (help !== null) {
      out(help);
      return 0;
    }
    const config = loadConfig();
    return withStore(config, (store) =>
      runOperatorCommand(argv, { store, io: terminalIo(), now: () => new Date(), publicUrl: config.publicUrl }),
    );
  }
  if (argv[0] === 'oidc') {
    if (argv.includes('--help') || argv.includes('-h') || argv.length === 1) {
      out(OIDC_HELP);
      return argv.length === 1 ? 2 : 0;
    }
    const config = loadConfig();
    return withStore(config, async (store) => {
      const serverSecret = await loadServerSecret(store, config.serverSecret);
      const oidc = await OidcService.open({
        store,
        issuer: config.publicUrl,
        serverSecret,
        backchannelUriProblem: backchannelUriChecker(config),
        development: isDevelopmentUrl(config.publicUrl),
        now: () => new Date(),
      });
      return runOidcCommand(argv.slice(1), { oidc, io: terminalIo() });
    });
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      oidc: { type: 'boolean' },
      alg: { type: 'string' },
      file: { type: 'string', short: 'f' },
      base64url: { type: 'boolean' },
      addr: { type: 'string' },
      id: { type: 'string' },
      identity: { type: 'string' },
      'min-sats': { type: 'string' },
      'min-days': { type: 'string' },
    },
  });
  if (values.version) {
    out(VERSION);
    return 0;
  }
  const [command, subcommand] = positionals;
  if (values.help || command === undefined) {
    out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command === 'help') {
    onlyArguments('help', positionals, 1, values, []);
    out(USAGE);
    return 0;
  }
  if (command === 'serve') {
    onlyArguments('serve', positionals, 1, values, []);
    await serve();
    return -1; // keeps running; shutdown exits the process
  }
  // Checked before the configuration is read or anything is opened.
  switch (command) {
    case 'migrate':
      onlyArguments('migrate', positionals, 1, values, []);
      break;
    case 'keys':
      if (subcommand === 'rotate' || subcommand === 'public' || subcommand === 'list')
        onlyArguments(
          `keys ${subcommand}`,
          positionals,
          2,
          values,
          subcommand === 'public' ? ['base64url'] : subcommand === 'rotate' ? ['oidc', 'alg'] : [],
        );
      if (values.alg !== undefined && !values.oidc) throw new UsageError('keys rotate: --alg goes with --oidc');
      if (values.alg !== undefined && !(OIDC_ALGORITHMS as readonly string[]).includes(values.alg))
        throw new UsageError(`keys rotate: --alg must be one of ${OIDC_ALGORITHMS.join(', ')}`);
      break;
    case 'check':
      onlyArguments('check', positionals, 1, values, ['addr', 'id', 'identity', 'min-sats', 'min-days']);
      break;
    case 'verify':
    case 'publish':
      onlyArguments(command, positionals, 1, values, ['file']);
      break;
  }
  const config = loadConfig();
  switch (command) {
    case 'migrate': {
      progress(`migrating ${redactDatabaseUrl(config.databaseUrl)}`);
      const report = await migrate(config.databaseUrl, { sqliteDriver: config.sqliteDriver });
      for (const step of report.applied) out(`applied ${step.version} ${step.name}`);
      out(`schema version ${report.currentVersion}${report.applied.length === 0 ? ' (already current)' : ''}`);
      return 0;
    }
    case 'keys': {
      if (subcommand === 'rotate' && values.oidc) {
        return withStore(config, async (store) => {
          await ensureOidcKeys(store, Date.now());
          const added = await rotateOidcKeys(store, Date.now(), values.alg as OidcAlgorithm | undefined);
          for (const key of added) out(`new OpenID provider key ${key.alg} ${key.kid}`);
          progress('running instances sign with them within a minute; the keys they replace stay in the JWKS for 7 days');
          return 0;
        });
      }
      if (subcommand === 'list') {
        return withStore(config, async (store) => {
          const now = Date.now();
          // Like a starting instance, listing makes the keys that do not exist yet.
          const signing = (await loadKeyRing(store, config.authPrivateJwk, new Date(now))).active.kid;
          await ensureOidcKeys(store, now);
          for (const key of await sessionKeyStates(store, signing, now)) {
            const state = key.state === 'pending' ? `published, signs from ${new Date(key.signs_from).toISOString()}` : key.state;
            out(`session  EdDSA  ${key.kid}  ${state}  created ${new Date(key.created_at).toISOString()}`);
          }
          for (const key of listOidcKeys(await store.listOidcKeys(), now)) {
            out(`oidc     ${key.alg.padEnd(5)}  ${key.kid}  ${key.state}  created ${new Date(key.created_at).toISOString()}`);
          }
          return 0;
        });
      }
      if (subcommand === 'rotate') {
        return withStore(config, async (store) => {
          const key = await rotateSigningKey(store, new Date());
          out(`new signing key ${key.kid}`);
          progress(
            'running instances publish it within a minute and sign with it 90 s from now, once all of them publish it; older keys stay in the JWKS for 31 days',
          );
          if (config.authPrivateJwk)
            progress('note: OC_AUTH_PRIVATE_JWK is set, and a configured key always signs; rotate it in the configuration instead');
          return 0;
        });
      }
      if (subcommand === 'public') {
        return withStore(config, async (store) => {
          const ring = await loadKeyRing(store, config.authPrivateJwk, new Date());
          const json = publicJwkForConsumers(ring.active);
          out(values.base64url ? Buffer.from(json, 'utf8').toString('base64url') : json);
          return 0;
        });
      }
      throw new UsageError('keys: expected "rotate", "list" or "public"');
    }
    case 'check': {
      const parsed = parseSubject({ addr: values.addr, id: values.id, identity: values.identity });
      if (!parsed.ok) throw new UsageError(`check: ${parsed.detail.replace(/^query\.?/, '')}`);
      const thresholds = { minSats: wholeNumber(values['min-sats'], '--min-sats'), minDays: wholeNumber(values['min-days'], '--min-days') };
      const relays = buildRelayPool(config);
      try {
        progress(`asking ${config.nostrRelays.length} relay(s); chain data from ${config.esploraUrls.length} Esplora base(s)`);
        const lookup = buildAttestationLookup(config, { relays, chain: buildChain(config), now: () => new Date() });
        const { outcome } = await lookup.check(parsed.subject);
        if (outcome.status === 'relays_unavailable') {
          out(JSON.stringify({ ok: false, reasons: ['relays_unavailable'] }, null, 2));
          return 1;
        }
        if (outcome.status === 'not_found') {
          out(
            JSON.stringify(
              { ok: false, reasons: ['not_found'], ...(outcome.rejected.length > 0 ? { rejected: outcome.rejected } : {}) },
              null,
              2,
            ),
          );
          return 1;
        }
        const body = checkResultBody(outcome, thresholds);
        out(JSON.stringify(body, null, 2));
        return body.ok ? 0 : 1;
      } finally {
        await relays.close();
      }
    }
    case 'verify': {
      if (!values.file) throw new UsageError('verify: --file FILE is required');
      const input = await readAttestationFile(values.file);
      progress(`verifying against ${config.esploraUrls.length} Esplora base(s)`);
      const result = await verifyAttestation(
        { addr: input.addr, msg: input.msg, sig: input.sig, scheme: input.scheme, attestationId: input.attestation_id },
        { chain: buildChain(config), network: config.bitcoinNetwork, minConfirmations: config.minConfirmations, now: () => new Date() },
      );
      out(JSON.stringify(result, null, 2));
      return result.ok ? 0 : 1;
    }
    case 'publish': {
      if (!values.file) throw new UsageError('publish: --file FILE is required');
      const path = values.file;
      return withStore(config, async (store) => {
        const stored = await store.getSetting('nostr_secret_key');
        const outcome = await publishFromFile(path, {
          config,
          log: progress,
          ...(stored ? { nostrSecretKey: hexToBytes(stored) } : {}),
        });
        out(JSON.stringify(outcome, null, 2));
        return outcome.status === 'published' ? 0 : 1;
      });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 78;
    } else if (error instanceof DatabaseMissingError) {
      process.stderr.write(`oc-host: ${error.message}\n`);
      process.exitCode = 78;
    } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`oc-host: ${(error as Error).message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`oc-host: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
