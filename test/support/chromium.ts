/**
 * The headless Chromium the browser suites drive: where it is, whether it is
 * there, and the flags it starts with (no sandbox, GPU, QUIC or background
 * traffic, so a run needs nothing but loopback).
 */
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM_PATH);
export const IN_CI = process.env.CI === 'true';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
