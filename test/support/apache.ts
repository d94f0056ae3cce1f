/**
 * Debian's Apache httpd with `mod_auth_openidc` as a relying party of
 * oc-host, for tests: a configuration written to a temporary directory (its
 * own ServerRoot, pid file, error log and runtime directory; no system
 * service), `apache2 -DFOREGROUND` on a loopback port, and a page that shows
 * the claims the module hands on, through server-side includes.
 *
 * `scripts/ensure-apache.sh` installs `apache2` and
 * `libapache2-mod-auth-openidc`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const APACHE_PATH = process.env.APACHE_PATH ?? '/usr/sbin/apache2';
const APACHE_MODULES = process.env.APACHE_MODULES ?? '/usr/lib/apache2/modules';
export const HAVE_APACHE = existsSync(APACHE_PATH) && existsSync(join(APACHE_MODULES, 'mod_auth_openidc.so'));

/** The claims the protected page shows, one `name: value` line each. */
const SHOWN_CLAIMS = ['sub', 'iss', 'email', 'email_verified', 'primary_btc', 'acr', 'amr'] as const;

export interface ApacheRelyingParty {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The protected page. */
  readonly protectedUrl: string;
  /** The module's redirect URI, to register with the provider. */
  readonly redirectUri: string;
  /** A page of this other site that frames `url`. */
  framing(url: string): string;
  /** What Apache wrote to its error log so far. */
  errorLog(): Promise<string>;
  close(): Promise<void>;
}

export interface ApacheOptions {
  readonly port: number;
  /** The provider's issuer (`PUBLIC_URL` of oc-host). */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string;
}

/** The whole configuration: what an operator's own holds, besides TLS and a real host name. */
function apacheConfig(directory: string, options: ApacheOptions, passphrase: string): string {
  // Started as root, Apache serves as another user (it refuses to serve as root).
  const user = process.getuid?.() === 0 ? 'User www-data\nGroup www-data\n' : '';
  return `ServerRoot "${directory}"
DefaultRuntimeDir "${directory}/run"
PidFile "${directory}/run/apache2.pid"
ErrorLog "${directory}/error.log"
LogLevel warn auth_openidc:info
Listen 127.0.0.1:${options.port}
ServerName 127.0.0.1:${options.port}
${user}
LoadModule mpm_prefork_module ${APACHE_MODULES}/mod_mpm_prefork.so
LoadModule authn_core_module ${APACHE_MODULES}/mod_authn_core.so
LoadModule authz_core_module ${APACHE_MODULES}/mod_authz_core.so
LoadModule authz_user_module ${APACHE_MODULES}/mod_authz_user.so
LoadModule mime_module ${APACHE_MODULES}/mod_mime.so
LoadModule include_module ${APACHE_MODULES}/mod_include.so
LoadModule auth_openidc_module ${APACHE_MODULES}/mod_auth_openidc.so

StartServers 1
MinSpareServers 1
MaxSpareServers 2
DocumentRoot "${directory}/htdocs"
TypesConfig /dev/null
AddType text/html .shtml
AddOutputFilter INCLUDES .shtml

OIDCProviderMetadataURL ${options.issuer}/.well-known/openid-configuration
OIDCClientID ${options.clientId}
OIDCClientSecret ${options.clientSecret}
OIDCRedirectURI ${apacheRedirectUri(options.port)}
OIDCScope "${options.scope}"
OIDCCryptoPassphrase ${passphrase}
OIDCRemoteUserClaim sub

<Directory "${directory}/htdocs">
  Require all granted
</Directory>
<Location /protected>
  AuthType openid-connect
  Require valid-user
  Options +Includes
</Location>
`;
}

/** The protected page: the signed-in user and each claim, as mod_auth_openidc sets them for the request. */
function protectedPage(): string {
  const claimLines = SHOWN_CLAIMS.map((name) => `${name}: <!--#echo var="OIDC_CLAIM_${name}" -->`).join('\n');
  return `<!doctype html>\n<title>Protected</title>\n<pre id="claims">\nuser: <!--#echo var="REMOTE_USER" -->\n${claimLines}\n</pre>\n`;
}

/** A page of another site that frames the URL after its `#` (a clickjacking attempt). */
const FRAMING_PAGE = `<!doctype html>
<title>Framing</title>
<iframe id="target" title="target"></iframe>
<script>document.getElementById('target').src = decodeURIComponent(location.hash.slice(1));</script>
`;

/** The module's redirect URI for Apache on `port`: known before Apache starts, so the client can be registered first. */
export function apacheRedirectUri(port: number): string {
  return `http://127.0.0.1:${port}/protected/redirect_uri`;
}

/**
 * Resolves once Apache has written its pid file (after its configuration
 * was accepted) and accepts connections on the loopback port.
 */
async function listening(port: number, pidFile: string, child: ChildProcess, log: () => Promise<string>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`apache: exited with ${child.exitCode}:\n${await log()}`);
    const open =
      existsSync(pidFile) &&
      (await new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }));
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`apache: nothing listens on 127.0.0.1:${port}:\n${await log()}`);
}

/** Writes the configuration and the page, starts Apache in the foreground and waits for its port. */
export async function startApache(options: ApacheOptions): Promise<ApacheRelyingParty> {
  const directory = await mkdtemp(join(tmpdir(), 'oc-apache-'));
  // The serving user (www-data, when started as root) reads the page and the runtime files.
  await chmod(directory, 0o755);
  await mkdir(join(directory, 'run'), { mode: 0o777 });
  await chmod(join(directory, 'run'), 0o777);
  await mkdir(join(directory, 'htdocs', 'protected'), { recursive: true, mode: 0o755 });
  await writeFile(join(directory, 'htdocs', 'protected', 'index.shtml'), protectedPage(), { mode: 0o644 });
  await writeFile(join(directory, 'htdocs', 'frame.html'), FRAMING_PAGE, { mode: 0o644 });
  const configPath = join(directory, 'apache2.conf');
  await writeFile(configPath, apacheConfig(directory, options, randomBytes(24).toString('base64url')), { mode: 0o600 });
  const errorLog = async (): Promise<string> => readFile(join(directory, 'error.log'), 'utf8').catch(() => '');
  // A process group of its own: on SIGTERM Apache's parent signals its whole group, which must not be the test runner's.
  const child = spawn(APACHE_PATH, ['-f', configPath, '-DFOREGROUND'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await listening(options.port, join(directory, 'run', 'apache2.pid'), child, async () => `${stderr}${await errorLog()}`);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const origin = `http://127.0.0.1:${options.port}`;
  return {
    origin,
    protectedUrl: `${origin}/protected/index.shtml`,
    redirectUri: apacheRedirectUri(options.port),
    framing: (url) => `${origin}/frame.html#${encodeURIComponent(url)}`,
    errorLog: async () => `${stderr}${await errorLog()}`,
    async close() {
      // SIGTERM: Apache stops its children and removes its pid file.
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
