/**
 * E-mail sign-ins per second end to end: POST start, the mail received by a
 * real SMTP server on loopback, the code read out of it, POST verify; next to
 * BIP-322 sign-ins (GET challenge, sign, POST signin) in the same run. Both
 * one at a time through inject, on in-memory SQLite.
 */
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { RATE_LIMITS_OFF } from '../test/support/app.js';
import { Browser, newWallet } from '../test/support/auth-client.js';
import { extractCode, startSmtpServer } from '../test/support/smtp-server.js';
import type { BenchResult } from './lib.js';

const QUIET = {
  LOG_LEVEL: 'silent',
  DATABASE_URL: 'sqlite::memory:',
  NOSTR_RELAYS: 'ws://127.0.0.1:9',
  ESPLORA_URLS: 'http://127.0.0.1:9',
  ...RATE_LIMITS_OFF,
};

/** Runs `once` repeatedly for about `ms` after a warm-up; sign-ins per second. */
async function rate(once: (index: number) => Promise<void>, ms: number): Promise<number> {
  for (let index = 0; index < 20; index++) await once(index);
  let done = 0;
  const started = performance.now();
  while (performance.now() - started < ms) await once(20 + done++);
  return (done * 1000) / (performance.now() - started);
}

export async function run(options: { ms?: number } = {}): Promise<BenchResult[]> {
  const ms = options.ms ?? 4000;
  const smtp = await startSmtpServer();
  const app = await buildApp(loadConfig({ ...QUIET, SMTP_URL: smtp.url }), { logger: false });
  try {
    // One address gets one distinct challenge a second (docs/protocol.md §5): cycle wallets.
    const wallets = Array.from({ length: 4096 }, () => newWallet());
    const bip322 = await rate(async (index) => {
      const reply = await new Browser(app).signIn(wallets[index % wallets.length]!);
      if (reply.status !== 200) throw new Error(`bench: BIP-322 sign-in failed: ${JSON.stringify(reply.body)}`);
    }, ms);

    const email = await rate(async (index) => {
      const browser = new Browser(app);
      const address = `bench-${index}@example.org`;
      const started = await browser.post('/api/auth/email-otp/start', { email: address });
      if (started.status !== 200) throw new Error(`bench: start failed: ${JSON.stringify(started.body)}`);
      const mail = await smtp.waitForMessage((message) => message.envelope.to.includes(address), 5000);
      const verified = await browser.post('/api/auth/email-otp/verify', {
        email: address,
        code: extractCode(mail),
        token: started.body.token,
      });
      if (verified.status !== 200) throw new Error(`bench: verify failed: ${JSON.stringify(verified.body)}`);
    }, ms);

    return [
      { name: 'BIP-322 sign-in: challenge + sign + signin (inject, sequential)', opsPerSec: bip322 },
      {
        name: 'e-mail sign-in: start + SMTP delivery + verify (inject, sequential)',
        opsPerSec: email,
        baseline: 'BIP-322 sign-in: challenge + sign + signin (inject, sequential)',
        ratio: email / bip322,
        note: 'mail sent over a real SMTP connection to a loopback server',
      },
    ];
  } finally {
    await app.close();
    await smtp.close();
  }
}
