#!/bin/sh
# Makes sure Debian's chromium is installed for the browser tests
# (test/e2e-browser.test.ts drives /usr/bin/chromium with playwright-core).
# Installs it only when it is missing and we are root; otherwise says why not.
set -eu

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "ensure-chromium: $CHROMIUM is present ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-chromium: $CHROMIUM is missing and this is not root; install it with: apt-get update && apt-get install -y chromium" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available; install Chromium another way" >&2
  exit 1
fi

echo "ensure-chromium: $CHROMIUM is missing; running apt-get update && apt-get install -y chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y chromium
echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
