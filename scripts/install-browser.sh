#!/usr/bin/env bash
# Debian's Chromium for the cited-answer page's browser test (no browser download at run time).
# --if-possible: where it cannot be installed (not root, no password-free sudo, no apt-get,
# or apt-get fails), say so and exit 0; the page tests are then skipped.
set -euo pipefail
optional=0
if [ "${1:-}" = "--if-possible" ]; then optional=1; fi
if command -v chromium >/dev/null 2>&1 || [ -x "${GR_CHROMIUM:-/usr/bin/chromium}" ]; then
  exit 0
fi
cannot() {
  echo "install-browser: $1; the page tests will be skipped (install Debian's chromium" \
       "package, e.g. sudo apt-get install chromium, to run them)" >&2
  if [ "$optional" = 1 ]; then exit 0; fi
  exit 1
}
if ! command -v apt-get >/dev/null 2>&1; then cannot "apt-get is not available"; fi
as_root=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo -n"
  else
    cannot "installing chromium needs root (or password-free sudo)"
  fi
fi
echo "install-browser: installing Debian's chromium with apt-get" >&2
if ! $as_root apt-get update -qq \
    || ! $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
then
  cannot "apt-get could not install chromium"
fi
