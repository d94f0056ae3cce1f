/**
 * The operator's OpenID client commands (docs/protocol.md §8 "Clients",
 * docs/oidc.md "Sign in with Bitcoin for any app"):
 *
 *   oc-host oidc clients add --name NAME --redirect-uri URI [...]
 *   oc-host oidc clients add --name NAME --machine --api-scopes "SCOPE ..." [--auth-method …] [--json]
 *   oc-host oidc clients add --name NAME --device [--auth-method …] [--logo-uri URL] [--client-uri URL] [--json]
 *   oc-host oidc clients list [--json]
 *   oc-host oidc clients show <client_id> [--json]
 *   oc-host oidc clients rotate-secret <client_id>
 *   oc-host oidc clients first-party <client_id> on|off
 *   oc-host oidc clients remove <client_id> [--yes]
 *
 * A secret is printed once, by `add` and `rotate-secret`; it is stored hashed.
 * Exit codes: 0 done; 1 no such client; 2 a usage error or metadata the
 * provider refuses; 3 the removal was not confirmed.
 */
import { isOcError } from '../platform/errors.js';
import {
  CLIENT_AUTH_METHODS,
  isOidcAlgorithm,
  OIDC_ALGORITHMS,
  type ClientAuthMethod,
  type ClientView,
  type OidcAlgorithm,
  type OidcService,
} from '../features/oidc/index.js';
import type { OidcResourceRecord } from '../features/oidc/index.js';
import { EXIT, type OperatorIo } from './operator.js';
import { parseCommandLine, UsageError } from './usage.js';

export const OIDC_HELP = `Usage:
  oc-host oidc clients add --name NAME --redirect-uri URI [--redirect-uri URI ...]
        [--post-logout-redirect-uri URI ...] [--public | --auth-method client_secret_basic|client_secret_post]
        [--native] [--first-party] [--pairwise] [--alg RS256|ES256|EdDSA] [--logo-uri URL]
        [--client-uri URL] [--backchannel-logout-uri URL] [--require-par] [--json]
                                   register an app; a confidential one's secret is
                                   printed once (stored hashed); --public: no secret,
                                   PKCE required; --native: an app on the person's
                                   device (http redirects to 127.0.0.1 or [::1] only);
                                   --first-party: no consent screen; --require-par:
                                   authorization requests must be pushed first (RFC 9126)
  oc-host oidc clients add --name NAME --device [--redirect-uri URI ...]
        [--auth-method client_secret_basic|client_secret_post] [--logo-uri URL] [--client-uri URL] [--json]
                                   an app on a device that shows a code to type on
                                   another screen (a TV, a console, a command-line
                                   tool: RFC 8628 device grant); public (no secret)
                                   unless --auth-method; no redirect URI needed
  oc-host oidc clients add --name NAME --machine --api-scopes "SCOPE ..."
        [--auth-method client_secret_basic|client_secret_post] [--alg RS256|ES256|EdDSA] [--json]
                                   a service calling an API (the client_credentials
                                   grant: no person, no redirect URI)
        --api-scopes "SCOPE ..."   (any client) the scopes of your APIs it may ask
                                   for (oidc resources); none unless given
  oc-host oidc clients list [--json]
                                   every client: id, name, owner, redirect URIs
  oc-host oidc clients show <client_id> [--json]
                                   one client's metadata (never its secret)
  oc-host oidc clients rotate-secret <client_id>
                                   a new secret, printed once; the old one stops working
  oc-host oidc clients first-party <client_id> on|off
                                   skip (on) or show (off) the consent screen
  oc-host oidc clients remove <client_id> [--yes]
                                   delete the client, its consents, codes and tokens
  oc-host oidc resources add <uri> --scopes "SCOPE ..." [--name NAME]
        [--alg ES256|RS256|EdDSA] [--token-seconds N] [--json]
                                   register an API: apps ask for tokens for it with
                                   resource=<uri> and get JWT access tokens (RFC 9068)
                                   signed with --alg (ES256 unless told), living
                                   --token-seconds (600 unless told)
  oc-host oidc resources list [--json]
  oc-host oidc resources remove <uri> [--yes]
                                   tokens already issued for it live on until they expire

Exit codes: 0 done, 1 no such client or API, 2 usage error or refused metadata,
3 not confirmed, 78 bad configuration.`;

export interface OidcCommandDeps {
  readonly oidc: OidcService;
  readonly io: OperatorIo;
}

const OPTIONS: Readonly<Record<string, readonly string[]>> = {
  add: [
    'name',
    'redirect-uri',
    'post-logout-redirect-uri',
    'public',
    'auth-method',
    'native',
    'first-party',
    'pairwise',
    'alg',
    'logo-uri',
    'client-uri',
    'backchannel-logout-uri',
    'require-par',
    'machine',
    'device',
    'api-scopes',
    'json',
  ],
  list: ['json'],
  show: ['json'],
  'rotate-secret': [],
  'first-party': [],
  remove: ['yes'],
};

/** What each `oidc resources` action takes. */
const RESOURCE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  add: ['scopes', 'name', 'alg', 'token-seconds', 'json'],
  list: ['json'],
  remove: ['yes'],
};

/** One line of `oidc resources add|list`: URI, name, algorithm, token lifetime, scopes. */
function resourceLine(resource: OidcResourceRecord): string {
  return `${resource.uri}  ${resource.name}  ${resource.alg}  ${resource.access_token_seconds}s  ${resource.scopes.join(' ')}`;
}

/**
 * A removal the operator confirms by typing "remove", unless `--yes` was
 * given: exits 3 when not confirmed, 1 when there was nothing to remove.
 */
async function removeConfirmed(
  { io }: OidcCommandDeps,
  values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>,
  what: { question: string; remove: () => Promise<boolean>; subject: string; missing: string },
): Promise<number> {
  if (!values.yes) {
    const answer = await io.ask(`${what.question} Type "remove" to confirm: `);
    if (answer?.trim().toLowerCase() !== 'remove') {
      io.err('not confirmed; nothing was changed');
      return EXIT.notConfirmed;
    }
  }
  if (!(await what.remove())) {
    io.err(what.missing);
    return EXIT.failed;
  }
  io.out(`removed ${what.subject}`);
  return EXIT.ok;
}

/** Runs `oc-host oidc resources …`: the APIs the provider issues JWT access tokens for. */
async function runResourcesCommand(
  action: string | undefined,
  subject: string | undefined,
  extra: readonly string[],
  values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>,
  deps: OidcCommandDeps,
): Promise<number> {
  const { io, oidc } = deps;
  if (action === undefined || RESOURCE_OPTIONS[action] === undefined)
    fail(`oidc resources: expected one of ${Object.keys(RESOURCE_OPTIONS).join(', ')}`);
  const stray = Object.keys(values).filter((name) => values[name] !== undefined && !RESOURCE_OPTIONS[action]?.includes(name));
  if (stray.length > 0) fail(`oidc resources ${action}: unexpected ${stray.map((name) => `--${name}`).join(' ')}`);
  const takes = action === 'list' ? 0 : 1;
  const given = [subject, ...extra].filter((value) => value !== undefined);
  if (given.length > takes) fail(`oidc resources ${action}: unexpected "${given.slice(takes).join(' ')}"`);
  if (given.length < takes) fail(`oidc resources ${action}: the API's URI is required`);
  try {
    switch (action) {
      case 'add': {
        const scopes = typeof values.scopes === 'string' ? values.scopes.split(/\s+/).filter(Boolean) : [];
        if (scopes.length === 0) fail('oidc resources add: --scopes is required (the scopes an app may ask for this API)');
        const seconds = values['token-seconds'];
        if (seconds !== undefined && !/^[0-9]{1,6}$/.test(String(seconds))) fail('oidc resources add: --token-seconds must be a number');
        const alg = values.alg;
        if (alg !== undefined && !isOidcAlgorithm(String(alg)))
          fail(`oidc resources add: --alg must be one of ${OIDC_ALGORITHMS.join(', ')}`);
        const resource = await oidc.resources.add({
          uri: subject as string,
          name: typeof values.name === 'string' ? values.name : undefined,
          scopes,
          alg: alg as OidcAlgorithm | undefined,
          accessTokenSeconds: seconds === undefined ? undefined : Number(seconds),
        });
        if (values.json) io.out(JSON.stringify(resource, null, 2));
        else io.out(resourceLine(resource));
        return EXIT.ok;
      }
      case 'list': {
        const resources = await oidc.resources.list();
        if (values.json) io.out(JSON.stringify(resources, null, 2));
        else if (resources.length === 0) io.err('no APIs');
        else for (const resource of resources) io.out(resourceLine(resource));
        return EXIT.ok;
      }
      case 'remove':
        return removeConfirmed(deps, values, {
          question: `Remove the API ${subject}? Tokens already issued for it live on until they expire.`,
          remove: () => oidc.resources.remove(subject as string),
          subject: subject as string,
          missing: `no API ${subject}`,
        });
    }
  } catch (error) {
    if (isOcError(error) && error.code === 'bad_request') fail(error.message);
    throw error;
  }
  return EXIT.usage;
}

function fail(message: string): never {
  throw new UsageError(message);
}

function describe(client: ClientView, io: OperatorIo): void {
  const metadata = client.metadata;
  io.out(`client_id    ${client.client_id}`);
  io.out(`name         ${String(metadata.client_name ?? '')}`);
  io.out(
    `type         ${metadata.token_endpoint_auth_method === 'none' ? 'public (PKCE)' : `confidential (${String(metadata.token_endpoint_auth_method)})`}`,
  );
  io.out(`first-party  ${client.first_party ? 'yes' : 'no'}`);
  io.out(`owner        ${client.owner_app_id ?? 'operator'}`);
  for (const uri of (metadata.redirect_uris as string[] | undefined) ?? []) io.out(`redirect     ${uri}`);
  for (const uri of (metadata.post_logout_redirect_uris as string[] | undefined) ?? []) io.out(`logout to    ${uri}`);
  if (typeof metadata.backchannel_logout_uri === 'string') io.out(`back-channel ${metadata.backchannel_logout_uri}`);
  io.out(`subject      ${String(metadata.subject_type ?? 'public')}`);
  io.out(`id token     ${String(metadata.id_token_signed_response_alg ?? 'RS256')}`);
}

/** Runs `oc-host oidc …` (argv without `oidc`); answers the exit code. */
export async function runOidcCommand(argv: readonly string[], deps: OidcCommandDeps): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    name: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
    public: { type: 'boolean' },
    'auth-method': { type: 'string' },
    native: { type: 'boolean' },
    'first-party': { type: 'boolean' },
    pairwise: { type: 'boolean' },
    alg: { type: 'string' },
    'logo-uri': { type: 'string' },
    'client-uri': { type: 'string' },
    'backchannel-logout-uri': { type: 'string' },
    'require-par': { type: 'boolean' },
    machine: { type: 'boolean' },
    device: { type: 'boolean' },
    'api-scopes': { type: 'string' },
    scopes: { type: 'string' },
    'token-seconds': { type: 'string' },
  });
  const { io, oidc } = deps;
  if (values.help) {
    io.out(OIDC_HELP);
    return EXIT.ok;
  }
  const [group, action, subject, ...extra] = positionals;
  if (group === 'resources') return runResourcesCommand(action, subject, extra, values, deps);
  if (group !== 'clients') fail(`oidc: expected "clients" or "resources", got "${group ?? ''}"`);
  if (action === undefined || OPTIONS[action] === undefined) fail(`oidc clients: expected one of ${Object.keys(OPTIONS).join(', ')}`);
  const stray = Object.keys(values).filter((name) => values[name as keyof typeof values] !== undefined && !OPTIONS[action]?.includes(name));
  if (stray.length > 0) fail(`oidc clients ${action}: unexpected ${stray.map((name) => `--${name}`).join(' ')}`);
  const takes = action === 'add' || action === 'list' ? 0 : action === 'first-party' ? 2 : 1;
  const given = [subject, ...extra].filter((value) => value !== undefined);
  if (given.length > takes) fail(`oidc clients ${action}: unexpected "${given.slice(takes).join(' ')}"`);
  if (given.length < takes) fail(`oidc clients ${action}: a client id is required${action === 'first-party' ? ', then on or off' : ''}`);

  try {
    switch (action) {
      case 'add': {
        if (values.name === undefined || values.name.trim() === '') fail('oidc clients add: --name is required');
        const redirects = values['redirect-uri'] ?? [];
        const machine = values.machine === true;
        if (machine && (values.public || redirects.length > 0 || values['post-logout-redirect-uri'] !== undefined)) {
          fail('oidc clients add: a --machine client has a secret and no redirect URIs');
        }
        const device = values.device === true;
        if (machine && device) fail('oidc clients add: a client is either --machine or --device');
        if (!machine && !device && redirects.length === 0) fail('oidc clients add: at least one --redirect-uri is required');
        if (values.public && values['auth-method'] !== undefined) fail('oidc clients add: --public takes no --auth-method');
        // A device keeps no secret well: public unless told otherwise.
        const method =
          values.public || (device && values['auth-method'] === undefined) ? 'none' : (values['auth-method'] ?? 'client_secret_basic');
        if (!(CLIENT_AUTH_METHODS as readonly string[]).includes(method) || (method === 'none' && !values.public && !device)) {
          fail(`oidc clients add: --auth-method must be client_secret_basic or client_secret_post`);
        }
        const alg = values.alg;
        if (alg !== undefined && !(OIDC_ALGORITHMS as readonly string[]).includes(alg))
          fail(`oidc clients add: --alg must be one of ${OIDC_ALGORITHMS.join(', ')}`);
        const issued = await oidc.clients.create(
          {
            client_name: values.name.trim(),
            redirect_uris: redirects,
            post_logout_redirect_uris: values['post-logout-redirect-uri'],
            token_endpoint_auth_method: method as ClientAuthMethod,
            id_token_signed_response_alg: alg as OidcAlgorithm | undefined,
            subject_type: values.pairwise ? 'pairwise' : 'public',
            logo_uri: values['logo-uri'],
            client_uri: values['client-uri'],
            backchannel_logout_uri: values['backchannel-logout-uri'],
            application_type: values.native ? 'native' : undefined,
            require_pushed_authorization_requests: values['require-par'] === true ? true : undefined,
            machine: machine ? true : undefined,
            device: device ? true : undefined,
            api_scopes: values['api-scopes']?.split(/\s+/).filter(Boolean),
          },
          { ownerAppId: null, firstParty: values['first-party'] === true },
        );
        // The pages show an app's logo only from https (docs/protocol.md §8 "Signing in"): said now, not found out later.
        const logo = values['logo-uri'];
        if (logo !== undefined && URL.parse(logo)?.protocol !== 'https:') {
          io.err('warning: --logo-uri is not https, so the sign-in and consent pages will not show it');
        }
        if (values.json) {
          io.out(JSON.stringify(issued, null, 2));
        } else {
          describe(issued, io);
          if (issued.client_secret !== undefined) {
            io.out(`secret       ${issued.client_secret}`);
            io.err('the secret is shown only now: store it in the app; oc-host keeps only its hash');
          }
        }
        return EXIT.ok;
      }
      case 'list': {
        const clients = await oidc.clients.list();
        if (values.json) io.out(JSON.stringify(clients, null, 2));
        else if (clients.length === 0) io.err('no clients');
        else {
          for (const client of clients) {
            const uris = (client.metadata.redirect_uris as string[] | undefined) ?? [];
            io.out(
              `${client.client_id}  ${String(client.metadata.client_name ?? '')}  ${client.owner_app_id ?? 'operator'}  ${uris.join(' ')}`,
            );
          }
        }
        return EXIT.ok;
      }
      case 'show': {
        const client = await oidc.clients.find(subject as string);
        if (client === null) {
          io.err(`no client ${subject}`);
          return EXIT.failed;
        }
        if (values.json) io.out(JSON.stringify(client, null, 2));
        else describe(client, io);
        return EXIT.ok;
      }
      case 'rotate-secret': {
        const issued = await oidc.clients.rotateSecret(subject as string);
        io.out(`secret       ${issued.client_secret}`);
        io.err('the old secret no longer works; the new one is shown only now');
        return EXIT.ok;
      }
      case 'first-party': {
        const setting = extra[0];
        if (setting !== 'on' && setting !== 'off') fail('oidc clients first-party: expected on or off');
        const client = await oidc.clients.setFirstParty(subject as string, setting === 'on');
        io.out(`${client.client_id} first-party ${client.first_party ? 'on: no consent screen' : 'off: the consent screen is shown'}`);
        return EXIT.ok;
      }
      case 'remove':
        return removeConfirmed(deps, values, {
          question: `Delete client ${subject}, its consents and its tokens?`,
          remove: () => oidc.clients.remove(subject as string),
          subject: subject as string,
          missing: `no client ${subject}`,
        });
    }
  } catch (error) {
    if (isOcError(error) && error.code === 'not_found') {
      io.err(`no client ${subject}`);
      return EXIT.failed;
    }
    if (isOcError(error) && error.code === 'bad_request') fail(error.message);
    throw error;
  }
  return EXIT.usage;
}
