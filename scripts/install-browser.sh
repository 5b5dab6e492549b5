#!/usr/bin/env bash
# Debian's Chromium for the cited-answer page's browser test (no browser download at run time).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "install-browser: need root for apt-get" >&2; exit 1; fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
