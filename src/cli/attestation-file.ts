/**
 * The attestation file of `oc-host verify --file` and `oc-host publish
 * --file` (docs/operations.md "Command line"): a JSON object `{addr, msg,
 * sig, scheme?, attestation_id?}`.
 *
 * The path is the operator's, but what it names may be anything: only a
 * regular file is read, at most {@link MAX_ATTESTATION_FILE_BYTES} of it, so
 * a FIFO cannot hold the command forever and a device cannot fill the
 * memory. A file that cannot be used is a usage error naming the path and
 * the rule it breaks, never quoting what the file holds (the file may be
 * another one than meant, and a secret).
 */
import { isJsonObject } from '../platform/json.js';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { UsageError } from './usage.js';

/** Most bytes read from the file: the API's body limit (docs/protocol.md §4). */
const MAX_ATTESTATION_FILE_BYTES = 64 * 1024;

export interface AttestationFile {
  readonly addr: string;
  readonly msg: string;
  readonly sig: string;
  readonly scheme?: string;
  readonly attestation_id?: string;
}

/** The file's bytes, or a usage error; reads nothing but a regular file, and no more than the limit. */
async function readBounded(path: string): Promise<Buffer> {
  let handle: FileHandle;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a
    // writer; on a regular file the flag changes nothing.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new UsageError(`cli: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    // Asked of the open file, so it is the one read below.
    const info = await handle.stat();
    if (!info.isFile()) throw new UsageError(`cli: ${path} is not a regular file`);
    if (info.size > MAX_ATTESTATION_FILE_BYTES) throw new UsageError(`cli: ${path} is larger than 64 KiB`);
    // One byte more than the limit tells a file that grew since from one that fits.
    const buffer = Buffer.alloc(MAX_ATTESTATION_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_ATTESTATION_FILE_BYTES) throw new UsageError(`cli: ${path} is larger than 64 KiB`);
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cli: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    await handle.close();
  }
}

/** Reads and checks the file; a bad file is the operator's mistake, reported by path and field. */
export async function readAttestationFile(path: string): Promise<AttestationFile> {
  const bytes = await readBounded(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    // The parser's message quotes the text around the fault: not repeated here.
    throw new UsageError(`cli: ${path} is not JSON`);
  }
  if (!isJsonObject(parsed)) {
    throw new UsageError(`cli: ${path} must hold a JSON object {addr, msg, sig, scheme?}`);
  }
  const record = parsed;
  for (const field of ['addr', 'msg', 'sig'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '')
      throw new UsageError(`cli: ${path}: ${field} must be a non-empty string`);
  }
  for (const field of ['scheme', 'attestation_id'] as const) {
    if (record[field] !== undefined && typeof record[field] !== 'string') throw new UsageError(`cli: ${path}: ${field} must be a string`);
  }
  return {
    addr: record.addr as string,
    msg: record.msg as string,
    sig: record.sig as string,
    ...(typeof record.scheme === 'string' ? { scheme: record.scheme } : {}),
    ...(typeof record.attestation_id === 'string' ? { attestation_id: record.attestation_id } : {}),
  };
}
