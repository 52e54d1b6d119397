#!/usr/bin/env bash
# Build a local Debian bookworm base image without any container registry:
#
#   images/base/build-local-base.sh IMAGE_NAME [EXTRA_PACKAGES_COMMA_LIST] [--with-npm]
#
#   images/base/build-local-base.sh gatehouse/base-node:bookworm
#   images/base/build-local-base.sh gatehouse/base-nats:bookworm nats-server
#   images/base/build-local-base.sh gatehouse/base-node-npm:bookworm '' --with-npm
#   images/base/build-local-base.sh gatehouse/base-python:bookworm python3,python3-pip,python3-venv,python3-pytest
#
# debootstrap (minbase + bash, git, ca-certificates and the extra packages) from
# the host's Debian mirror, plus the host's node binary at /usr/local/bin/node (and
# with --with-npm the host's npm from /usr/lib/node_modules/npm, with npm and npx links),
# imported with `docker import`. The Dockerfiles in images/ take the result as
# `--build-arg BASE=IMAGE_NAME`. Needs root, a Docker engine and debootstrap
# (installed if missing). Idempotent: an existing IMAGE_NAME is left alone
# (remove it with `docker image rm IMAGE_NAME` to rebuild).
#
# Environment: GATEHOUSE_DEBIAN_MIRROR (default: from /etc/apt/sources.list*,
# else http://deb.debian.org/debian), GATEHOUSE_DEBIAN_SUITE (default bookworm).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

usage() {
  echo "usage: $0 IMAGE_NAME [EXTRA_PACKAGES_COMMA_LIST] [--with-npm]" >&2
  exit 2
}

[[ $# -ge 1 && $# -le 3 && -n "$1" ]] || usage
image="$1"
extra="${2:-}"
with_npm=""
if [[ $# -eq 3 ]]; then
  [[ "$3" == --with-npm ]] || usage
  with_npm=1
fi
suite="${GATEHOUSE_DEBIAN_SUITE:-bookworm}"
[[ "$extra" =~ ^[a-z0-9.+,-]*$ ]] || die "bad package list: '$extra' (comma-separated Debian package names)"
extra="${extra#,}"
extra="${extra%,}"

ensure_docker_engine
if docker image inspect "$image" >/dev/null 2>&1; then
  say "image $image already exists; nothing to do (docker image rm $image to rebuild)"
  exit 0
fi

is_root || die "building a base image with debootstrap needs root (run as root, or: sudo $0 $*)"
ensure_debootstrap

# First non-security Debian archive URI the host's apt uses.
debian_mirror() {
  local files=() f uri
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && files+=("$f")
  done
  [[ ${#files[@]} -gt 0 ]] || return 1
  # deb822: "URIs: a b"; one-line: "deb [opts] uri suite comp...".
  uri="$(
    awk '
      /^[[:space:]]*#/ { next }
      tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i; next }
      $1 == "deb" {
        line = $0; sub(/\[[^]]*\]/, "", line); split(line, w, /[[:space:]]+/)
        n = 0; for (i = 1; i in w; i++) if (w[i] != "") { n++; if (n == 2) { print w[i]; break } }
      }
    ' "${files[@]}" 2>/dev/null \
      | grep -E '^(https?|ftp)://[^[:space:]]*/debian/?$' \
      | grep -v -i security \
      | head -n 1
  )" || true
  [[ -n "$uri" ]] || return 1
  printf '%s\n' "${uri%/}"
}

mirror="${GATEHOUSE_DEBIAN_MIRROR:-}"
if [[ -z "$mirror" ]]; then
  mirror="$(debian_mirror)" || mirror="http://deb.debian.org/debian"
fi

node_bin="$(command -v node)" || die "node is not on the PATH; the base image gets a copy of the host's node binary"
node_bin="$(readlink -f "$node_bin")"
node_version="$("$node_bin" --version)" || die "$node_bin does not run"

include="git,ca-certificates${extra:+,$extra}"

tmp="$(mktemp -d /var/tmp/gatehouse-base.XXXXXX)"
rootfs="$tmp/rootfs"
cleanup() {
  local m
  # debootstrap mounts /proc, /sys... in the target while it runs; never let
  # rm -rf walk into them if it stopped half-way.
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r)
  if awk -v p="$tmp/" 'index($2, p) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    say "warning: something is still mounted under $tmp; leaving it in place"
  else
    rm -rf --one-file-system "$tmp"
  fi
}
trap cleanup EXIT

started=$SECONDS
say "building $image: debootstrap --variant=minbase --include=$include $suite from $mirror (log: $tmp/debootstrap.log)"
if ! debootstrap --variant=minbase --include="$include" "$suite" "$rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
  tail -n 30 "$tmp/debootstrap.log" >&2
  [[ -f "$rootfs/debootstrap/debootstrap.log" ]] && tail -n 30 "$rootfs/debootstrap/debootstrap.log" >&2
  die "debootstrap failed"
fi
say "debootstrap done in $((SECONDS - started))s"

say "copying node $node_version from $node_bin to /usr/local/bin/node"
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
chroot "$rootfs" /usr/local/bin/node --version >/dev/null \
  || die "the copied node binary does not run inside the new root file system (missing shared libraries?)"
if [[ -n "$with_npm" ]]; then
  npm_dir="$(dirname "$node_bin")/../lib/node_modules/npm"
  [[ -f "$npm_dir/bin/npm-cli.js" ]] || npm_dir=/usr/lib/node_modules/npm
  [[ -f "$npm_dir/bin/npm-cli.js" ]] || die "the host's npm is not at /usr/lib/node_modules/npm; install npm or drop --with-npm"
  say "copying npm from $npm_dir to /usr/local/lib/node_modules/npm, with npm and npx links"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$(readlink -f "$npm_dir")" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" /usr/local/bin/npm --version >/dev/null || die "the copied npm does not run in the new root file system"
  chroot "$rootfs" /usr/local/bin/npx --version >/dev/null || die "the copied npx does not run in the new root file system"
fi
for cmd in bash git; do
  chroot "$rootfs" /bin/sh -c "command -v $cmd" >/dev/null || die "$cmd is missing from the new root file system"
done

say "removing apt lists, caches, logs, man pages, docs and translations"
rm -rf "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/var/cache/apt/* \
  "$rootfs"/var/cache/debconf/*-old \
  "$rootfs"/var/lib/dpkg/*-old \
  "$rootfs"/var/log/apt/* \
  "$rootfs"/var/log/dpkg.log \
  "$rootfs"/var/log/bootstrap.log \
  "$rootfs"/usr/share/man/* \
  "$rootfs"/usr/share/info/* \
  "$rootfs"/tmp/* \
  "$rootfs"/var/tmp/*
find "$rootfs/usr/share/doc" -mindepth 1 -type f ! -name copyright -delete 2>/dev/null || true
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
# Message translations (about 40 MB, mostly git's); the sandbox speaks English.
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
# Host-specific files; Docker provides its own at run time.
rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
printf '%s\n' "Built by gatehouse images/base/build-local-base.sh: $suite minbase + $include, node $node_version" \
  >"$rootfs/etc/gatehouse-base"

say "importing into docker as $image ($(du -sh --one-file-system "$rootfs" | cut -f1) on disk)"
import_started=$SECONDS
tar --numeric-owner --one-file-system -C "$rootfs" -c . \
  | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    --change "LABEL org.opencontainers.image.title=gatehouse-base org.opencontainers.image.description=\"debian $suite minbase + $include, node $node_version\"" \
    --message "gatehouse local base: debian $suite minbase + $include, node $node_version" \
    - "$image" >/dev/null \
  || die "docker import failed"
say "imported in $((SECONDS - import_started))s"

say "built $image in $((SECONDS - started))s"
