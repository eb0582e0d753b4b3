#!/usr/bin/env bash
# System packages the test suite needs beyond Node and Java: nftables and iproute2 for the
# network-namespace forwarding test (run as root), curl for reaching pods through it;
# containerd, runc, the CNI plugins and busybox-static for the CRI runtime's tests (a real
# containerd started by the test, images built locally from busybox); chromium for the
# dashboard's browser tests (driven headless by playwright-core at /usr/bin/chromium);
# python3-kubernetes (the official Python client, Debian's package) for
# test/e2e/python-client.test.ts, which runs it with /usr/bin/python3 (a python3 on PATH
# may be a pyenv shim that does not see it); bind9-dnsutils (dig) for the cluster DNS tests
# (addons/dns/*.test.ts), which query the DNS server with the real resolver tool.
# Installs them with apt-get when they are missing and we are root; otherwise says what to do.
set -euo pipefail
missing=()
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
# The image builder copies /bin/busybox into images: it must be the static one (ldd fails on it).
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=(busybox-static)
[ -x /usr/bin/chromium ] || missing+=(chromium)
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; } || missing+=(python3-kubernetes)
command -v dig >/dev/null 2>&1 || missing+=(bind9-dnsutils)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "note: ${missing[*]} not installed; the nftables and CRI tests only run as root anyway; the dashboard's browser tests need /usr/bin/chromium, the Python client test python3-kubernetes, the DNS tests dig (bind9-dnsutils)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: install ${missing[*]} with your package manager (the nftables, CRI, Python client and DNS tests need them)" >&2
  exit 1
fi
echo "installing ${missing[*]} for the nftables, CRI, Python client and DNS tests ..." >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
