#!/usr/bin/env bash
# Installs the system programs awctl's real environments and tests use, when missing (Debian/Ubuntu).
set -euo pipefail
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v tmux >/dev/null || need+=(tmux)
command -v dockerd >/dev/null || need+=(docker.io)
[ -x /bin/busybox ] || need+=(busybox-static)
[ -x /bin/bash-static ] || need+=(bash-static)
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v dbus-daemon >/dev/null || need+=(dbus-daemon)
[ -x /usr/libexec/at-spi-bus-launcher ] || need+=(at-spi2-core)
[ -d /usr/lib/python3/dist-packages/pyatspi ] || need+=(python3-pyatspi)
command -v openbox >/dev/null || need+=(openbox)
command -v mousepad >/dev/null || need+=(mousepad)
command -v galculator >/dev/null || need+=(galculator)
if [ ${#need[@]} -eq 0 ]; then
  echo "system deps present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
