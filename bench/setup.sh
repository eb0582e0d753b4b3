#!/usr/bin/env bash
# System packages the bench needs beyond Node and Java: etcd-server (Debian's etcd 3.4),
# which bench/log-throughput.ts starts on loopback with its own data directory to measure
# etcd beside the logs in the same run. Installs it with apt-get when it is missing and we
# are root; otherwise says what to do and fails, so the bench never prints etcd figures it
# did not measure.
set -euo pipefail
command -v etcd >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "error: etcd is not installed; install Debian's etcd-server (apt-get install etcd-server) or put an etcd 3.4+ binary on PATH" >&2
  exit 1
fi
echo "installing etcd-server for the bench's etcd figures ..." >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
# The package starts a system etcd on the default ports; the bench starts its own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then systemctl stop etcd || true; fi
command -v etcd >/dev/null 2>&1
