#!/usr/bin/env bash
# Make sure Debian's chromium is at /usr/bin/chromium (the dashboard's browser test drives it through
# Playwright; Playwright's own browser download does not work offline). Quiet when it is already there.
# Installs it with apt-get (non-interactive), through sudo only when not root and sudo exists. Idempotent.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

[ -x "$CHROMIUM" ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
LOG=/tmp/ensure-chromium.log  # apt's chatter (debconf notices) goes here; shown only on failure
if $SUDO apt-get update -qq >"$LOG" 2>&1 \
    && $SUDO apt-get install -y -qq --no-install-recommends chromium >>"$LOG" 2>&1 \
    && [ -x "$CHROMIUM" ]; then
    exit 0
fi
cat "$LOG" >&2
echo "ensure_chromium: could not install Debian's chromium ($CHROMIUM missing; log above)" >&2
exit 1
