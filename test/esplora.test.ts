/**
 * The Esplora client against real HTTP servers on loopback (docs/protocol.md §7
 * "Chain metrics": bases in order, a timeout each, malformed answers are
 * failures, all failing is ChainUnavailableError).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChainUnavailableError, createEsploraClient } from '../src/chain/index.js';
import { closedPortUrl, fakeBlockHash, loadEsploraFixture, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';

const fixture = loadEsploraFixture();
const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const mixed = fixture.utxoSets.mixed!;

const fakes: EsploraFake[] = [];
async function fake(options: Parameters<typeof startEsploraFake>[0]): Promise<EsploraFake> {
  const started = await startEsploraFake(options);
  fakes.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((started) => started.close()));
});

describe('createEsploraClient', () => {
  it('reads several UTXOs at different heights, drops block_hash and reports the tip', async () => {
    const server = await fake({ tipHeight: fixture.tipHeight, utxosByAddress: { [ADDRESS]: mixed } });
    const client = createEsploraClient({ bases: [server.url] });
    const answer = await client.addressUtxos(ADDRESS);

    expect(answer.tipHeight).toBe(945000);
    expect(answer.source).toBe(server.url);
    expect(answer.utxos).toHaveLength(5);
    const first = mixed[0]!;
    expect(answer.utxos[0]).toEqual({
      txid: first.txid,
      vout: first.vout,
      value: first.value,
      status: { confirmed: true, block_height: first.status.block_height, block_time: first.status.block_time },
    });
    expect(answer.utxos.map((utxo) => utxo.status.block_height ?? null)).toEqual([944990, null, 900000, 945000, 930000]);
    expect(server.requests).toEqual({ utxo: 1, tipHeight: 1, tipHash: 0, other: 0 });
  });

  it('keeps unconfirmed UTXOs, with a status of confirmed false and no height', async () => {
    const server = await fake({ tipHeight: 100, utxosByAddress: { [ADDRESS]: fixture.utxoSets.unconfirmedOnly! } });
    const answer = await createEsploraClient({ bases: [server.url] }).addressUtxos(ADDRESS);
    expect(answer.utxos).toEqual([
      { txid: fixture.utxoSets.unconfirmedOnly![0]!.txid, vout: 0, value: 25000, status: { confirmed: false } },
      { txid: fixture.utxoSets.unconfirmedOnly![1]!.txid, vout: 3, value: 5000, status: { confirmed: false } },
    ]);
  });

  it('answers an empty list for an address without UTXOs', async () => {
    const server = await fake({ tipHeight: 7 });
    const answer = await createEsploraClient({ bases: [`${server.url}/api/`] }).addressUtxos(ADDRESS);
    expect(answer).toEqual({ utxos: [], tipHeight: 7, source: server.url });
  });

  it('URL-encodes the address in the path', async () => {
    const server = await fake({ tipHeight: 7, utxosByAddress: { 'a/b?c#d e': mixed.slice(0, 1) } });
    const answer = await createEsploraClient({ bases: [server.url] }).addressUtxos('a/b?c#d e');
    expect(server.queriedAddresses).toEqual(['a/b?c#d e']);
    expect(answer.utxos).toHaveLength(1);
  });

  it('runs the two requests of one base in parallel', async () => {
    const server = await fake({ tipHeight: 7, delayMs: 150 });
    await createEsploraClient({ bases: [server.url] }).addressUtxos(ADDRESS);
    expect(server.peakConcurrency).toBe(2);
  });

  it('raises the tip to a UTXO height seen above it (the answers straddled a block)', async () => {
    const server = await fake({ tipHeight: 944999, utxosByAddress: { [ADDRESS]: mixed } });
    const answer = await createEsploraClient({ bases: [server.url] }).addressUtxos(ADDRESS);
    expect(answer.tipHeight).toBe(945000);
  });

  it('falls through a slow base after its own timeout', async () => {
    const slow = await fake({ tipHeight: 1, mode: 'slow' });
    const good = await fake({ tipHeight: 2, utxosByAddress: { [ADDRESS]: mixed } });
    const started = Date.now();
    const answer = await createEsploraClient({ bases: [slow.url, good.url], timeoutMs: 200 }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(good.url);
    expect(answer.utxos).toHaveLength(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(slow.requests.utxo).toBe(1);
  });

  it('gives a timeout to each base, not to the whole look-up', async () => {
    const slowA = await fake({ tipHeight: 1, delayMs: 250 });
    const slowB = await fake({ tipHeight: 2, delayMs: 250 });
    // Each base answers within 400 ms, though the two together take longer.
    slowA.setMode('http500');
    const answer = await createEsploraClient({ bases: [slowA.url, slowB.url], timeoutMs: 400 }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(slowB.url);
    expect(answer.tipHeight).toBe(2);
  });

  it('falls through a broken base (connection refused on a closed port)', async () => {
    const closed = await closedPortUrl();
    const good = await fake({ tipHeight: 3 });
    const answer = await createEsploraClient({ bases: [closed, good.url] }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(good.url);
  });

  it('falls through a base that drops the connection', async () => {
    const broken = await fake({ tipHeight: 1, mode: 'broken' });
    const good = await fake({ tipHeight: 3 });
    const answer = await createEsploraClient({ bases: [broken.url, good.url] }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(good.url);
    expect(broken.requests.utxo + broken.requests.tipHeight).toBeGreaterThan(0);
  });

  it('falls through malformed JSON and a tip that is not a number', async () => {
    const malformed = await fake({ tipHeight: 1, mode: 'malformed' });
    const good = await fake({ tipHeight: 3 });
    const answer = await createEsploraClient({ bases: [malformed.url, good.url] }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(good.url);
    expect(malformed.requests.utxo).toBe(1);
  });

  it('falls through an HTTP error status', async () => {
    const failing = await fake({ tipHeight: 1, mode: 'http500' });
    const good = await fake({ tipHeight: 3 });
    const answer = await createEsploraClient({ bases: [failing.url, good.url] }).addressUtxos(ADDRESS);
    expect(answer.source).toBe(good.url);
  });

  const valid = mixed[0]!;
  const wrongShapes: [string, unknown][] = [
    ['an object instead of a list', { utxos: [] }],
    ['a negative value', [{ ...valid, value: -1 }]],
    ['a fractional value', [{ ...valid, value: 1.5 }]],
    ['a value above 21 million BTC', [{ ...valid, value: 2_100_000_000_000_001 }]],
    ['a value as a string', [{ ...valid, value: '1000' }]],
    ['a negative vout', [{ ...valid, vout: -1 }]],
    ['a txid of 63 hex', [{ ...valid, txid: valid.txid.slice(1) }]],
    ['a txid that is not hex', [{ ...valid, txid: 'z'.repeat(64) }]],
    ['a missing status', [{ txid: valid.txid, vout: 0, value: 1 }]],
    ['confirmed as a string', [{ ...valid, status: { ...valid.status, confirmed: 'true' } }]],
    ['a confirmed UTXO without a height', [{ ...valid, status: { confirmed: true, block_time: 1 } }]],
    ['a confirmed UTXO with a negative height', [{ ...valid, status: { ...valid.status, block_height: -5 } }]],
    ['a null entry', [null]],
  ];
  for (const [name, body] of wrongShapes) {
    it(`counts ${name} as a failure of that base`, async () => {
      const wrong = await fake({ tipHeight: 1, utxosByAddress: { [ADDRESS]: body as unknown[] } });
      const good = await fake({ tipHeight: 3 });
      const answer = await createEsploraClient({ bases: [wrong.url, good.url] }).addressUtxos(ADDRESS);
      expect(answer.source).toBe(good.url);
    });
  }

  for (const tip of ['', '-1', '12.5', 'abc', '99999999999999999999']) {
    it(`counts a tip height of ${JSON.stringify(tip)} as a failure of that base`, async () => {
      const wrong = await fake({ tipHeight: 1 });
      wrong.setTip(tip);
      const good = await fake({ tipHeight: 3 });
      const answer = await createEsploraClient({ bases: [wrong.url, good.url] }).addressUtxos(ADDRESS);
      expect(answer.source).toBe(good.url);
    });
  }

  it('throws ChainUnavailableError when every base fails, naming no secrets', async () => {
    const closed = await closedPortUrl();
    const failing = await fake({ tipHeight: 1, mode: 'http500' });
    const malformed = await fake({ tipHeight: 1, mode: 'malformed' });
    const slow = await fake({ tipHeight: 1, mode: 'slow' });
    const withSecret = `${closed.replace('http://', 'http://user:hunter2@')}/api/key-s3cret?token=s3cret`;
    const client = createEsploraClient({
      bases: [withSecret, failing.url, malformed.url, slow.url],
      timeoutMs: 200,
    });
    const error = await client.addressUtxos(ADDRESS).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ChainUnavailableError);
    const chainError = error as ChainUnavailableError;
    expect(chainError.message).toMatch(/^chain: /);
    expect(chainError.message).not.toMatch(/hunter2|s3cret|token/);
    // Which of a base's two parallel requests fails first is a race, hence the alternatives.
    const reasons = chainError.failures.map((failure) => failure.reason);
    expect(reasons).toHaveLength(4);
    expect(reasons[0]).toMatch(/^(utxo|tip height) request failed$/);
    expect(reasons[1]).toMatch(/^(utxo|tip height) answered HTTP 500$/);
    expect(reasons[2]).toBe('utxo answer is not JSON');
    expect(reasons[3]).toBe('timed out after 200 ms');
    expect(chainError.failures[0]!.base).toBe(closed);
  });

  it('changes its mind when the fake changes mode (programmable fake)', async () => {
    const server = await fake({ tipHeight: 5 });
    const client = createEsploraClient({ bases: [server.url] });
    server.setMode('http500');
    await expect(client.addressUtxos(ADDRESS)).rejects.toBeInstanceOf(ChainUnavailableError);
    server.setMode('ok');
    server.setTip(6);
    server.setUtxos(ADDRESS, mixed.slice(0, 2));
    const answer = await client.addressUtxos(ADDRESS);
    expect(answer.tipHeight).toBe(944990);
    expect(answer.utxos).toHaveLength(2);
    expect(server.requests.utxo).toBe(2);
  });

  it('refuses a configuration without bases or with a bad timeout', () => {
    expect(() => createEsploraClient({ bases: [] })).toThrow(/^chain: /);
    expect(() => createEsploraClient({ bases: ['not a url'] })).toThrow(/^chain: /);
    expect(() => createEsploraClient({ bases: ['http://127.0.0.1:1'], timeoutMs: 0 })).toThrow(/^chain: /);
    expect(() => createEsploraClient({ bases: ['http://127.0.0.1:1'], maxConnections: 0 })).toThrow(/^chain: maxConnections/);
  });
});

describe('the tip and the UTXOs asked separately (the block cache asks them so)', () => {
  it('tip() reads the height and the hash of one base', async () => {
    const server = await fake({ tipHeight: 945000 });
    const client = createEsploraClient({ bases: [server.url] });
    expect(await client.tip()).toEqual({ height: 945000, hash: fakeBlockHash(945000), source: server.url });
    server.setTipHash('AB'.repeat(32));
    expect((await client.tip()).hash).toBe('ab'.repeat(32));
    expect(server.requests).toEqual({ utxo: 0, tipHeight: 2, tipHash: 2, other: 0 });
  });

  it('utxos() asks one request, without the tip', async () => {
    const server = await fake({ tipHeight: 945000, utxosByAddress: { [ADDRESS]: mixed } });
    const answer = await createEsploraClient({ bases: [server.url] }).utxos(ADDRESS);
    expect(answer.utxos).toHaveLength(5);
    expect(answer.source).toBe(server.url);
    expect(server.requests).toEqual({ utxo: 1, tipHeight: 0, tipHash: 0, other: 0 });
  });

  it('fails over on a malformed tip hash, and names the reason', async () => {
    const bad = await fake({ tipHeight: 3 });
    const good = await fake({ tipHeight: 4 });
    bad.setTipHash('not a hash');
    const client = createEsploraClient({ bases: [bad.url, good.url] });
    expect(await client.tip()).toMatchObject({ height: 4, source: good.url });
    good.setMode('http500');
    const error = await client.tip().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChainUnavailableError);
    expect((error as ChainUnavailableError).failures.map((failure) => failure.reason)[0]).toBe('tip hash is not 64 hex characters');
  });
});

describe('the kept-alive connection pool of each base', () => {
  it('reuses one connection for requests one after another', async () => {
    const server = await fake({ tipHeight: 7, utxosByAddress: { [ADDRESS]: mixed } });
    const client = createEsploraClient({ bases: [server.url] });
    for (let index = 0; index < 20; index++) await client.utxos(ADDRESS);
    expect(server.requests.utxo).toBe(20);
    expect(server.connections).toBe(1);
  });

  it('holds at most maxConnections requests in flight per base; the others wait their turn', async () => {
    const server = await fake({ tipHeight: 7, delayMs: 30 });
    const client = createEsploraClient({ bases: [server.url], maxConnections: 3 });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => client.utxos(`addr-${index}`)));
    expect(answers).toHaveLength(12);
    expect(server.requests.utxo).toBe(12);
    expect(server.peakConcurrency).toBe(3);
    expect(server.connections).toBeLessThanOrEqual(3);
  });

  it('counts the wait for a connection against the base timeout, then fails over', async () => {
    const slow = await fake({ tipHeight: 7, mode: 'slow', slowMs: 400 });
    const good = await fake({ tipHeight: 8 });
    const client = createEsploraClient({ bases: [slow.url, good.url], maxConnections: 1, timeoutMs: 150 });
    const [first, second] = await Promise.all([client.utxos('a'), client.utxos('b')]);
    expect(first.source).toBe(good.url);
    expect(second.source).toBe(good.url);
    // The second never reached the slow base: its wait for the one connection timed out.
    expect(slow.requests.utxo).toBe(1);
  });

  it('asks again on a new connection when the server closed a kept-alive one as the request left', async () => {
    // A server that answers the first request of each connection and drops the connection at the second.
    const seen = { connections: 0, answered: 0, dropped: 0 };
    const open = new Set<Socket>();
    const server: Server = createServer((socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      seen.connections += 1;
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        if (requests > 1) {
          seen.dropped += 1;
          socket.destroy();
          return;
        }
        seen.answered += 1;
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n[]');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const client = createEsploraClient({ bases: [`http://127.0.0.1:${port}`] });
      for (let index = 0; index < 3; index++) expect((await client.utxos(ADDRESS)).utxos).toEqual([]);
      expect(seen).toEqual({ connections: 3, answered: 3, dropped: 2 });
    } finally {
      // The client keeps its last connection open: end it, or close would wait for it.
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("asks through the caller's fetch when one is given", async () => {
    const server = await fake({ tipHeight: 7, utxosByAddress: { [ADDRESS]: mixed } });
    const asked: string[] = [];
    const client = createEsploraClient({
      bases: [server.url],
      fetch: (input, init) => {
        asked.push(String(input));
        return fetch(input, init);
      },
    });
    expect((await client.utxos(ADDRESS)).utxos).toHaveLength(mixed.length);
    expect(asked).toEqual([`${server.url}/address/${ADDRESS}/utxo`]);
  });

  it('counts a redirect as a failure of that base: the next base answers', async () => {
    const moved = createServer((socket: Socket) => {
      socket.on('data', () => socket.end('HTTP/1.1 301 Moved Permanently\r\nlocation: https://127.0.0.1:9/\r\ncontent-length: 0\r\n\r\n'));
    });
    await new Promise<void>((resolve) => moved.listen(0, '127.0.0.1', resolve));
    try {
      const good = await fake({ tipHeight: 7, utxosByAddress: { [ADDRESS]: mixed } });
      const { port } = moved.address() as { port: number };
      const client = createEsploraClient({ bases: [`http://127.0.0.1:${port}`, good.url] });
      expect((await client.utxos(ADDRESS)).source).toBe(good.url);
      const error = await createEsploraClient({ bases: [`http://127.0.0.1:${port}`] })
        .utxos(ADDRESS)
        .catch((caught: unknown) => caught);
      expect((error as ChainUnavailableError).failures.map((failure) => failure.reason)).toEqual(['utxo answered HTTP 301']);
    } finally {
      await new Promise<void>((resolve) => moved.close(() => resolve()));
    }
  });

  it('takes only http and https bases', () => {
    expect(() => createEsploraClient({ bases: ['ftp://127.0.0.1/api'] })).toThrow('http or https');
  });
});
