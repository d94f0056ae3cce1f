#!/bin/sh
# Makes sure Debian's Apache httpd and mod_auth_openidc are installed for the
# relying-party test (test/oidc-apache.test.ts runs /usr/sbin/apache2 with a
# configuration of its own on a loopback port, no system service).
# Installs them only when they are missing and we are root; otherwise says why
# not.
set -eu

APACHE=/usr/sbin/apache2
MODULE=/usr/lib/apache2/modules/mod_auth_openidc.so

if [ -x "$APACHE" ] && [ -f "$MODULE" ]; then
  echo "ensure-apache: $APACHE and $MODULE are present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-apache: $APACHE or $MODULE is missing and this is not root; install them with: apt-get update && apt-get install -y apache2 libapache2-mod-auth-openidc" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-apache: $APACHE or $MODULE is missing and apt-get is not available; install Apache and mod_auth_openidc another way" >&2
  exit 1
fi

echo "ensure-apache: installing apache2 and libapache2-mod-auth-openidc"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends apache2 libapache2-mod-auth-openidc
echo "ensure-apache: installed $("$APACHE" -v 2>/dev/null | head -n 1 || echo "$APACHE")"
