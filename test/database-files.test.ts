/**
 * Who can read the files the service writes (docs/operations.md "Files and
 * permissions"): the embedded database holds the signing keys, the webhook
 * key and the server secret, so a folder the service creates is 0700 and
 * the database, its side files and the development outbox are 0600; an
 * existing database file other local users can open is left as it is and
 * named in a warning at start, with the chmod that fixes it.
 */
import { chmod, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { openStore } from '../src/store.js';
import { testConfig } from './support/app.js';
import { useTempDir } from './support/temp-dir.js';

const PUBLIC_URL = 'http://localhost:8787';

let dir: string;
useTempDir('oc-files-', (made) => {
  dir = made;
});

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

interface LogLine {
  level: number;
  msg: string;
  file?: string;
  mode?: string;
}

async function start(databasePath: string, outboxDir: string) {
  const lines: LogLine[] = [];
  const app = await buildApp(testConfig({ DATABASE_URL: `sqlite:${databasePath}`, LOG_LEVEL: 'warn' }), {
    outboxDir,
    logStream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  await app.ready();
  return { app, lines };
}

/** Creates the database `<name>/oc.sqlite`, lets `prepare` change it, and starts an app on it with its outbox beside it. */
async function startOnExisting(name: string, prepare: (databasePath: string) => Promise<void> = async () => {}) {
  const databasePath = join(dir, name, 'oc.sqlite');
  const store = await openStore(`sqlite:${databasePath}`);
  await store.close();
  await prepare(databasePath);
  return { databasePath, ...(await start(databasePath, join(dir, name, 'outbox'))) };
}

describe('the embedded database on disk', () => {
  it('creates its folders 0700, and the database, its side files and the outbox 0600', async () => {
    const data = join(dir, 'fresh', 'data');
    const databasePath = join(data, 'oc.sqlite');
    const outbox = join(data, 'outbox');
    const { app, lines } = await start(databasePath, outbox);
    try {
      // A code mail: a write to the database and a file in the outbox.
      const reply = await app.inject({
        method: 'POST',
        url: '/api/auth/email-otp/start',
        headers: { origin: PUBLIC_URL, 'content-type': 'application/json' },
        payload: { email: 'files@example.org' },
      });
      expect(reply.statusCode).toBe(200);
      expect(await modeOf(join(dir, 'fresh'))).toBe(0o700);
      expect(await modeOf(data)).toBe(0o700);
      expect(await modeOf(outbox)).toBe(0o700);
      const names = await readdir(data);
      expect(names).toEqual(expect.arrayContaining(['oc.sqlite', 'oc.sqlite-wal', 'oc.sqlite-shm', 'outbox']));
      for (const name of names.filter((name) => name !== 'outbox')) expect(await modeOf(join(data, name)), name).toBe(0o600);
      const mails = await readdir(outbox);
      expect(mails).toHaveLength(1);
      expect(await modeOf(join(outbox, mails[0]!))).toBe(0o600);
      expect(lines.filter((line) => line.msg.startsWith('storage:'))).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('warns at start, naming the file, its mode and the chmod, when others can read an existing database; and leaves it as it is', async () => {
    const { databasePath, app, lines } = await startOnExisting('shared', async (path) => chmod(path, 0o644));
    try {
      const warnings = lines.filter((line) => line.msg.startsWith('storage:'));
      expect(warnings).toContainEqual(expect.objectContaining({ level: 40, file: databasePath, mode: '0644' }));
      const warning = warnings.find((line) => line.file === databasePath)!;
      expect(warning.msg).toContain(databasePath);
      expect(warning.msg).toContain('0644');
      expect(warning.msg).toContain(`chmod 600 ${databasePath}`);
      // Warned, not changed: the operator may have a reason (docs/operations.md "Files and permissions").
      expect(await modeOf(databasePath)).toBe(0o644);
    } finally {
      await app.close();
    }
  });

  it('says nothing about a database only its owner can open', async () => {
    const { databasePath, app, lines } = await startOnExisting('private');
    try {
      expect(await modeOf(databasePath)).toBe(0o600);
      expect(lines.filter((line) => line.msg.startsWith('storage:'))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
