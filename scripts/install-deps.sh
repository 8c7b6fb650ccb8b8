#!/bin/sh
# Install bsrsolve's build dependencies from Debian packages, only those missing.
# Idempotent: a machine that has them all runs no apt-get at all.
set -eu
pkgs="cmake build-essential libmetis-dev libsuitesparse-dev libcunit1-dev zlib1g-dev"
# Optional: the build skips the Fortran module and the pkg-config test without them.
optional="gfortran pkg-config"
missing=""
# A package counts as present when dpkg has it, or when what it provides is
# already reachable (a tool on PATH, a header under CPATH / CMAKE_PREFIX_PATH /
# the system folders): the GPU machine gets its libraries that way, with no
# network for apt-get.
have_header() {
  dirs="/usr/include /usr/include/suitesparse /usr/local/include"
  oldifs=$IFS; IFS=:
  for d in ${CPATH:-} ${C_INCLUDE_PATH:-}; do [ -n "$d" ] && dirs="$dirs $d"; done
  for d in ${CMAKE_PREFIX_PATH:-}; do [ -n "$d" ] && dirs="$dirs $d/include $d/include/suitesparse"; done
  IFS=$oldifs
  for d in $dirs; do [ -f "$d/$1" ] && return 0; done
  return 1
}
provided() {
  case "$1" in
    cmake) command -v cmake >/dev/null 2>&1 ;;
    build-essential) command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 ;;
    gfortran) command -v gfortran >/dev/null 2>&1 ;;
    pkg-config) command -v pkg-config >/dev/null 2>&1 ;;
    libmetis-dev) have_header metis.h ;;
    libsuitesparse-dev) have_header umfpack.h ;;
    libcunit1-dev) have_header CUnit/CUnit.h ;;
    zlib1g-dev) have_header zlib.h ;;
    *) return 1 ;;
  esac
}
for p in $pkgs $optional; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  provided "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  required=""
  for p in $missing; do
    case " $optional " in *" $p "*) ;; *) required="$required $p" ;; esac
  done
  if [ -z "$required" ]; then
    echo "install-deps: optional$missing not installed (no apt-get here); their parts are skipped"
    exit 0
  fi
  echo "install-deps: missing$missing and no apt-get here; install them or set CMAKE_PREFIX_PATH" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
