/**
 * A real SMTP server for tests (docs/architecture.md: "a real SMTP server ... on
 * loopback and started by the tests themselves"), on the `smtp-server`
 * package at 127.0.0.1 with a free port. It keeps every message it accepts
 * and parses it just enough to read the headers and the text and HTML parts,
 * decoding quoted-printable, base64 and RFC 2047 encoded words, since
 * nodemailer picks whichever transfer encoding suits the content.
 *
 * Misbehaviour, to test the mailer against the servers it will meet:
 * - `reject-rcpt`: every RCPT TO gets 550 (mailbox unavailable);
 * - `reject-data`: the message is read, then refused with 554;
 * - `silent`: accepts the TCP connection and never sends the greeting (a hung
 *   server, for the greeting timeout);
 * - `stop()`: not listening any more, connections are refused ("SMTP down").
 * With `auth`, AUTH PLAIN/LOGIN is required and only those credentials pass.
 * STARTTLS is not offered: the built-in certificate is self-signed and the
 * tests are about mail, not TLS.
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

type SmtpServerMode = 'accept' | 'reject-rcpt' | 'reject-data' | 'silent';

export interface SmtpServerOptions {
  readonly auth?: { readonly user: string; readonly pass: string } | undefined;
  readonly mode?: SmtpServerMode | undefined;
}

interface ReceivedPart {
  /** Lowercase MIME type, e.g. `text/plain`. */
  readonly contentType: string;
  /** Decoded to text (UTF-8 unless the part says otherwise); text parts with `\n` line ends. */
  readonly body: string;
}

export interface ReceivedMail {
  /** The SMTP envelope, as the client sent MAIL FROM and RCPT TO. */
  readonly envelope: { readonly from: string; readonly to: readonly string[] };
  /** The user the client authenticated as, if any. */
  readonly user: string | undefined;
  /** The message as received, bytes taken as UTF-8. */
  readonly raw: string;
  /** Unfolded, with encoded words decoded; names as sent. */
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>;
  /** First header of that name, case-insensitively. */
  header(name: string): string | undefined;
  readonly subject: string | undefined;
  /** The first text/plain leaf part (or the body of a single-part text/plain message). */
  readonly text: string | undefined;
  /** The first text/html leaf part. */
  readonly html: string | undefined;
  /** Every leaf part, in order. */
  readonly parts: readonly ReceivedPart[];
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`, with `user:pass@` when auth is on. */
  readonly url: string;
  readonly port: number;
  messages(): ReceivedMail[];
  /** Resolves with the first message (already received or arriving) that matches. */
  waitForMessage(predicate?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  setMode(mode: SmtpServerMode): void;
  /** Stops listening and drops open connections; the port then refuses connections. */
  stop(): Promise<void>;
  /** Same as stop; safe to call twice. */
  close(): Promise<void>;
}

// ---- minimal MIME parsing (RFC 2045-2047) ----

interface Entity {
  readonly headers: Array<[string, string]>;
  /** Body bytes as a latin1 string (one char per byte), so nothing is lost before decoding. */
  readonly body: string;
}

function splitEntity(raw: string): Entity {
  const match = /\r?\n\r?\n/.exec(raw);
  const head = match ? raw.slice(0, match.index) : raw;
  const body = match ? raw.slice(match.index + match[0].length) : '';
  const headers: Array<[string, string]> = [];
  for (const line of head.split(/\r?\n/)) {
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last[1] += line; // RFC 5322 §2.2.3 unfolding: drop the CRLF, keep the white space
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return { headers, body };
}

function headerOf(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return headers.find(([key]) => key.toLowerCase() === lower)?.[1];
}

function parameter(value: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

function decodeQuotedPrintable(text: string): Buffer {
  const withoutSoftBreaks = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let index = 0; index < withoutSoftBreaks.length; index += 1) {
    const character = withoutSoftBreaks[index] as string;
    const hex = withoutSoftBreaks.slice(index + 1, index + 3);
    if (character === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(character.charCodeAt(0) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  const label = (charset ?? 'utf-8').toLowerCase();
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

/** RFC 2047 encoded words; white space between two adjacent words is dropped. */
function decodeHeaderValue(latin1: string): string {
  const utf8 = Buffer.from(latin1, 'latin1').toString('utf8');
  return utf8
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?[^?]+\?[BbQq]\?[^?]*\?=)/g, '$1')
    .replace(/=\?([^?*]+)(?:\*[^?]*)?\?([BbQq])\?([^?]*)\?=/g, (_, charset: string, encoding: string, text: string) => {
      const bytes = encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQuotedPrintable(text.replace(/_/g, ' '));
      return decodeCharset(bytes, charset);
    });
}

function decodeBody(entity: Entity): string {
  const encoding = (headerOf(entity.headers, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  const charset = parameter(headerOf(entity.headers, 'Content-Type') ?? '', 'charset');
  let bytes: Buffer;
  if (encoding === 'base64') bytes = Buffer.from(entity.body.replace(/\s+/g, ''), 'base64');
  else if (encoding === 'quoted-printable') bytes = decodeQuotedPrintable(entity.body);
  else bytes = Buffer.from(entity.body, 'latin1');
  return decodeCharset(bytes, charset);
}

function leafParts(entity: Entity, into: ReceivedPart[], depth = 0): void {
  const contentType = headerOf(entity.headers, 'Content-Type') ?? 'text/plain';
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const boundary = parameter(contentType, 'boundary');
  if (type.startsWith('multipart/') && boundary !== undefined && depth < 10) {
    const delimiter = `--${boundary}`;
    const sections = entity.body.split(new RegExp(`\\r?\\n?${escapeRegExp(delimiter)}(?:--)?[ \\t]*\\r?\\n?`));
    // The first section is the preamble, the last the epilogue after the close delimiter.
    for (const section of sections.slice(1, -1)) leafParts(splitEntity(section), into, depth + 1);
    return;
  }
  const body = decodeBody(entity);
  // SMTP lines end in CRLF; tests compare text with `\n`.
  into.push({ contentType: type, body: type.startsWith('text/') ? body.replace(/\r\n/g, '\n') : body });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Parses a message as received over SMTP (exported for tests of this parser). */
export function parseMail(rawBytes: Buffer, envelope: ReceivedMail['envelope'] = { from: '', to: [] }, user?: string): ReceivedMail {
  const entity = splitEntity(rawBytes.toString('latin1'));
  const headers = entity.headers.map(([name, value]) => [name, decodeHeaderValue(value)] as const);
  const parts: ReceivedPart[] = [];
  leafParts(entity, parts);
  return {
    envelope,
    user,
    raw: rawBytes.toString('utf8'),
    headers,
    header: (name) => headerOf(headers, name),
    subject: headerOf(headers, 'Subject'),
    text: parts.find((part) => part.contentType === 'text/plain')?.body,
    html: parts.find((part) => part.contentType === 'text/html')?.body,
    parts,
  };
}

/**
 * The 6-digit code of a sign-in mail (docs/api.md Limits), from its text
 * part. Throws unless exactly one distinct 6-digit number appears, so a mail
 * that shows the code twice differently, or not at all, fails the test.
 */
export function extractCode(mail: ReceivedMail): string {
  // The sign-in link carries the code too, and an address that may hold six digits: the code is read from the words.
  const text = (mail.text ?? '').replace(/https?:\/\/\S+/g, '');
  const codes = new Set(text.match(/(?<![0-9])[0-9]{6}(?![0-9])/g) ?? []);
  if (codes.size !== 1) throw new Error(`smtp test server: expected one 6-digit code in the text part, found ${codes.size}`);
  return [...codes][0] as string;
}

function smtpError(message: string, responseCode: number): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  let mode: SmtpServerMode = options.mode ?? 'accept';
  const received: ReceivedMail[] = [];
  const events = new EventEmitter();
  const auth = options.auth;

  const server = new SMTPServer({
    logger: false,
    // No reverse DNS look-up of each client: there is no DNS to ask here, and each try stalls a delivery.
    disableReverseLookup: true,
    disabledCommands: auth === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
    authOptional: auth === undefined,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    // close() waits this long for open connections (a `silent` one never ends by itself).
    closeTimeout: 200,
    onConnect(_session, callback) {
      if (mode === 'silent') return; // never greet
      callback();
    },
    onAuth(credentials, _session, callback) {
      if (auth !== undefined && credentials.username === auth.user && credentials.password === auth.pass) {
        callback(null, { user: credentials.username });
        return;
      }
      callback(smtpError('Invalid username or password', 535));
    },
    onRcptTo(_address, _session, callback) {
      if (mode === 'reject-rcpt') callback(smtpError('Mailbox unavailable', 550));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (mode === 'reject-data') {
          callback(smtpError('Message rejected by policy', 554));
          return;
        }
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        const to = session.envelope.rcptTo.map((recipient) => recipient.address);
        const user = typeof session.user === 'string' ? session.user : undefined;
        const mail = parseMail(Buffer.concat(chunks), { from, to }, user);
        received.push(mail);
        events.emit('mail', mail);
        callback();
      });
    },
  });
  server.on('error', () => {}); // client misbehaviour in tests is not a server failure

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  const credentials = auth === undefined ? '' : `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@`;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return stopped;
  };

  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    messages: () => [...received],
    waitForMessage(predicate = () => true, timeoutMs = 5000) {
      const already = received.find(predicate);
      if (already) return Promise.resolve(already);
      return new Promise<ReceivedMail>((resolve, reject) => {
        const onMail = (mail: ReceivedMail): void => {
          if (!predicate(mail)) return;
          clearTimeout(timer);
          events.off('mail', onMail);
          resolve(mail);
        };
        const timer = setTimeout(() => {
          events.off('mail', onMail);
          reject(new Error(`smtp test server: no matching message within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('mail', onMail);
      });
    },
    setMode(next) {
      mode = next;
    },
    stop,
    close: stop,
  };
}
