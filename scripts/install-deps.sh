#!/bin/sh
# Install bsrsolve's build dependencies from Debian packages, only those missing.
# Idempotent: a machine that has them all runs no apt-get at all.
set -eu
pkgs="cmake build-essential libmetis-dev libsuitesparse-dev libcunit1-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing$missing and no apt-get here; install them or set CMAKE_PREFIX_PATH" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
