/**
 * The mailer (src/platform/mail) against a real SMTP server on loopback
 * (test/support/smtp-server.ts), and the development outbox on a real
 * temporary directory (docs/protocol.md §1 `SMTP_URL`, `MAIL_FROM`).
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OcError } from '../src/platform/errors.js';
import {
  OUTBOX_WARNING,
  createMailer,
  createOutboxMailer,
  createSmtpMailer,
  escapeHtml,
  isSaneEmail,
  normalizeEmail,
  type MailLog,
  type MailMessage,
} from '../src/platform/mail/index.js';
import { parseMail, startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { ocFailure } from './support/errors.js';
import { useTempDir } from './support/temp-dir.js';

const FROM = 'oc-host <no-reply@example.com>';
const PUBLIC_URL = 'https://auth.example.com';
/** A fixed clock, whole seconds: the Date header has second precision. */
const T0 = new Date(Date.UTC(2025, 0, 15, 12, 0, 0));

function message(overrides: Partial<MailMessage> = {}): MailMessage {
  return {
    to: 'alice@example.org',
    subject: 'Grüße from the test',
    text: 'Plain text — with a non-ASCII dash and a long line '.repeat(5),
    html: '<p>HTML <strong>part</strong> — é</p>',
    ...overrides,
  };
}

interface LogLine {
  readonly level: 'info' | 'warn';
  readonly details: Record<string, unknown>;
  readonly message: string;
}

function recordingLog(): MailLog & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (details, text) => lines.push({ level: 'info', details, message: text }),
    warn: (details, text) => lines.push({ level: 'warn', details, message: text }),
  };
}

/** A send on `mailer` fails with mail_unavailable in under 3 s; the mailer is closed after. */
async function expectFastMailUnavailable(mailer: ReturnType<typeof createSmtpMailer>): Promise<void> {
  const started = Date.now();
  try {
    await expectMailUnavailable(mailer.send(message()));
  } finally {
    await mailer.close();
  }
  expect(Date.now() - started).toBeLessThan(3000);
}

async function expectMailUnavailable(promise: Promise<unknown>): Promise<OcError> {
  const ocError = await ocFailure(promise);
  expect(ocError.code).toBe('mail_unavailable');
  expect(ocError.status).toBe(503);
  return ocError;
}

describe('SMTP mailer', () => {
  let server: TestSmtpServer;

  beforeAll(async () => {
    server = await startSmtpServer();
  });
  afterEach(() => server.setMode('accept'));
  afterAll(async () => {
    await server.close();
  });

  it('delivers a text and an HTML part with From, To, Date and a Message-ID on the service domain', async () => {
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL, now: () => T0 });
    try {
      await mailer.send(message({ to: 'bob@example.org' }));
    } finally {
      await mailer.close();
    }
    const mail = await server.waitForMessage((received) => received.envelope.to.includes('bob@example.org'));
    expect(mail.envelope).toEqual({ from: 'no-reply@example.com', to: ['bob@example.org'] });
    expect(mail.header('From')).toBe('"oc-host" <no-reply@example.com>');
    expect(mail.header('To')).toBe('bob@example.org');
    expect(mail.subject).toBe('Grüße from the test');
    expect(mail.header('Content-Type')).toMatch(/^multipart\/alternative;/);
    expect(mail.text).toBe(message().text);
    expect(mail.html).toBe(message().html);
    expect(new Date(mail.header('Date') ?? '').getTime()).toBe(T0.getTime());
    expect(mail.header('Message-ID')).toMatch(/^<[0-9a-f]{32}@auth\.example\.com>$/);
    expect(mail.header('Reply-To')).toBeUndefined();
  });

  it('gives every message its own Message-ID and sets Reply-To when asked', async () => {
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    try {
      await mailer.send(message({ to: 'carol@example.org', replyTo: 'dave@example.net' }));
      await mailer.send(message({ to: 'carol@example.org' }));
    } finally {
      await mailer.close();
    }
    const mails = server.messages().filter((received) => received.envelope.to.includes('carol@example.org'));
    expect(mails).toHaveLength(2);
    expect(mails[0]?.header('Reply-To')).toBe('dave@example.net');
    expect(mails[0]?.header('Message-ID')).not.toBe(mails[1]?.header('Message-ID'));
  });

  it('refuses a header with a line break before anything is sent', async () => {
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    const before = server.messages().length;
    try {
      await expect(mailer.send(message({ subject: 'Hi\r\nBcc: victim@example.com' }))).rejects.toThrow(TypeError);
      await expect(mailer.send(message({ to: 'a@example.org\nBcc: victim@example.com' }))).rejects.toThrow(TypeError);
      await expect(mailer.send(message({ replyTo: 'a@example.org\r\nX-Evil: 1' }))).rejects.toThrow(TypeError);
    } finally {
      await mailer.close();
    }
    expect(server.messages()).toHaveLength(before);
  });

  it('turns a refused recipient into mail_unavailable without the SMTP reply in the message', async () => {
    server.setMode('reject-rcpt');
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    try {
      const error = await expectMailUnavailable(mailer.send(message()));
      expect(error.message).not.toMatch(/550|mailbox|127\.0\.0\.1/i);
      expect(JSON.stringify(error.toBody())).not.toMatch(/550|mailbox|127\.0\.0\.1/i);
      // The SMTP reply is kept for the caller's log.
      expect(String((error.cause as Error | undefined)?.message)).toMatch(/550|mailbox/i);
    } finally {
      await mailer.close();
    }
  });

  it('turns a message refused after DATA into mail_unavailable', async () => {
    server.setMode('reject-data');
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    try {
      const error = await expectMailUnavailable(mailer.send(message()));
      expect(error.message).not.toMatch(/554|policy/i);
    } finally {
      await mailer.close();
    }
  });

  it('fails fast with mail_unavailable when the server never greets', async () => {
    server.setMode('silent');
    const mailer = createSmtpMailer({
      smtpUrl: server.url,
      from: FROM,
      publicUrl: PUBLIC_URL,
      timeouts: { connectionMs: 300, greetingMs: 300, socketMs: 300 },
    });
    await expectFastMailUnavailable(mailer);
  });

  it('rejects a send after close', async () => {
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    await mailer.close();
    await mailer.close(); // twice is fine
    await expectMailUnavailable(mailer.send(message()));
  });

  it('refuses bad settings at creation', () => {
    expect(() => createSmtpMailer({ smtpUrl: '', from: FROM, publicUrl: PUBLIC_URL })).toThrow(/smtpUrl/);
    expect(() => createSmtpMailer({ smtpUrl: server.url, from: 'a\r\nBcc: x@y.z', publicUrl: PUBLIC_URL })).toThrow(/from/);
    expect(() => createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: 'not a url' })).toThrow(/publicUrl/);
  });
});

describe('SMTP mailer with authentication', () => {
  let server: TestSmtpServer;

  beforeAll(async () => {
    server = await startSmtpServer({ auth: { user: 'mailer', pass: 's3cret pass' } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('logs in with the credentials of SMTP_URL', async () => {
    expect(server.url).toMatch(/^smtp:\/\/mailer:s3cret%20pass@127\.0\.0\.1:\d+$/);
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    try {
      await mailer.send(message({ to: 'erin@example.org' }));
    } finally {
      await mailer.close();
    }
    const mail = await server.waitForMessage((received) => received.envelope.to.includes('erin@example.org'));
    expect(mail.user).toBe('mailer');
  });

  it('fails with mail_unavailable on wrong credentials and on none', async () => {
    const wrong = server.url.replace('s3cret%20pass', 'wrong');
    const withoutCredentials = `smtp://127.0.0.1:${server.port}`;
    for (const smtpUrl of [wrong, withoutCredentials]) {
      const mailer = createSmtpMailer({ smtpUrl, from: FROM, publicUrl: PUBLIC_URL });
      try {
        const error = await expectMailUnavailable(mailer.send(message({ to: 'frank@example.org' })));
        expect(error.message).not.toMatch(/535|password|username/i);
      } finally {
        await mailer.close();
      }
    }
    expect(server.messages().filter((received) => received.envelope.to.includes('frank@example.org'))).toHaveLength(0);
  });
});

describe('SMTP mailer with the server down', () => {
  it('fails fast with mail_unavailable when nothing listens', async () => {
    const server = await startSmtpServer();
    await server.stop();
    const mailer = createSmtpMailer({ smtpUrl: server.url, from: FROM, publicUrl: PUBLIC_URL });
    await expectFastMailUnavailable(mailer);
  });
});

describe('development outbox mailer', () => {
  let dir: string;
  useTempDir('oc-host-outbox-', (made) => {
    dir = made;
  });

  it('writes each message as an .eml file, readable by the owner only, and logs only the file', async () => {
    const outbox = join(dir, 'first', 'outbox'); // created on the first send
    const log = recordingLog();
    const mailer = createOutboxMailer({ dir: outbox, log, from: FROM, publicUrl: PUBLIC_URL, now: () => T0 });
    const secretText = 'Your code is 493817';
    await mailer.send(message({ to: 'grace@example.org', text: secretText, replyTo: 'heidi@example.net' }));
    await mailer.send(message({ to: 'grace@example.org' }));
    await mailer.close();

    const files = (await readdir(outbox)).sort();
    expect(files).toHaveLength(2);
    for (const file of files) expect(file).toMatch(/^2025-01-15T12-00-00-000Z-[0-9a-f]{8}\.eml$/);
    for (const file of files) expect((await stat(join(outbox, file))).mode & 0o777).toBe(0o600);

    const parsed = await Promise.all(files.map(async (file) => parseMail(await readFile(join(outbox, file)))));
    const withCode = parsed.find((mail) => mail.text === secretText);
    expect(withCode).toBeDefined();
    expect(withCode?.header('To')).toBe('grace@example.org');
    expect(withCode?.header('From')).toBe('"oc-host" <no-reply@example.com>');
    expect(withCode?.header('Reply-To')).toBe('heidi@example.net');
    expect(withCode?.header('Message-ID')).toMatch(/^<[0-9a-f]{32}@auth\.example\.com>$/);
    expect(withCode?.html).toBe(message().html);

    expect(log.lines).toHaveLength(2);
    for (const line of log.lines) {
      expect(line.level).toBe('info');
      expect(files.map((file) => join(outbox, file))).toContain(line.details.file);
      // docs/architecture.md: no addresses or codes in logs.
      const logged = JSON.stringify(line);
      expect(logged).not.toContain('grace@example.org');
      expect(logged).not.toContain('493817');
    }
  });

  it('fails with mail_unavailable when the directory cannot be written', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a directory');
    const mailer = createOutboxMailer({ dir: join(blocker, 'outbox'), log: recordingLog() });
    await expectMailUnavailable(mailer.send(message()));
  });

  it('has a loud start-up warning that names SMTP_URL', () => {
    expect(OUTBOX_WARNING).toMatch(/SMTP_URL/);
    expect(OUTBOX_WARNING).toMatch(/NO e-mail is sent/);
  });
});

describe('createMailer', () => {
  it('uses SMTP when SMTP_URL is set', async () => {
    const server = await startSmtpServer();
    const mailer = createMailer(
      { smtpUrl: server.url, mailFrom: FROM, publicUrl: PUBLIC_URL },
      { log: recordingLog(), outboxDir: join(tmpdir(), 'oc-host-never-written') },
    );
    try {
      await mailer.send(message({ to: 'ivan@example.org' }));
      expect(server.messages()).toHaveLength(1);
    } finally {
      await mailer.close();
      await server.close();
    }
  });

  it('uses the outbox when SMTP_URL is unset', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oc-host-outbox-'));
    try {
      const log = recordingLog();
      const mailer = createMailer({ smtpUrl: undefined, mailFrom: FROM, publicUrl: PUBLIC_URL }, { log, outboxDir: dir });
      await mailer.send(message({ to: 'judy@example.org' }));
      await mailer.close();
      const files = await readdir(dir);
      expect(files).toHaveLength(1);
      const mail = parseMail(await readFile(join(dir, files[0] as string)));
      expect(mail.header('From')).toBe('"oc-host" <no-reply@example.com>');
      expect(log.lines).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('e-mail addresses', () => {
  it.each([
    ['alice@example.com', 'alice@example.com'],
    ['  Alice.Smith+tag@Example.COM ', 'alice.smith+tag@example.com'],
    ["o'brien@sub.example.co.uk", "o'brien@sub.example.co.uk"],
    ['x@xn--bcher-kva.example', 'x@xn--bcher-kva.example'],
    [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`],
  ])('accepts %j as %j', (input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
  });

  it.each([
    ['', /email: must not be empty/],
    ['   ', /email: must not be empty/],
    ['alice', /email: must be an e-mail address/],
    ['alice@', /email: must be an e-mail address/],
    ['@example.com', /email: must be an e-mail address/],
    ['alice@localhost', /email: must be an e-mail address/],
    ['alice@@example.com', /email: must be an e-mail address/],
    ['a@b@example.com', /email: must be an e-mail address/],
    ['alice..smith@example.com', /email: must be an e-mail address/],
    ['.alice@example.com', /email: must be an e-mail address/],
    ['alice smith@example.com', /email: must be an e-mail address/],
    ['"alice"@example.com', /email: must be an e-mail address/],
    ['alice@example.com\r\nBcc: victim@example.com', /email: must be an e-mail address/],
    ['alice@exa_mple.com', /email: must be an e-mail address/],
    ['alice@-example.com', /email: must be an e-mail address/],
    ['alice@192.168.0.1', /email: must be an e-mail address/],
    ['alice@[127.0.0.1]', /email: must be an e-mail address/],
    ['ålice@example.com', /email: must be an e-mail address/],
    [`${'a'.repeat(65)}@example.com`, /email: must be an e-mail address/],
    [`a@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(10)}.com`, /email: must be at most 254/],
  ])('refuses %j', (input, detail) => {
    const error = (() => {
      try {
        normalizeEmail(input);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(OcError);
    expect((error as OcError).code).toBe('bad_request');
    expect((error as OcError).detail).toMatch(detail);
  });

  it('refuses a value that is not a string and names the field it was given', () => {
    expect(() => normalizeEmail(42, 'recovery_email')).toThrow(/recovery_email: must be a string/);
    expect(isSaneEmail('alice@example.com')).toBe(true);
    expect(isSaneEmail('Alice@example.com')).toBe(false); // callers lowercase first
  });

  it('escapes the five HTML special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
