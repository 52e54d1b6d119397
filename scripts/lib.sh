# shellcheck shell=bash
# Small helpers shared by gatehouse's scripts. Source it, do not run it:
#
#   set -euo pipefail
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# The helpers do not change the caller's shell options and do not rely on
# `set -e` (which bash ignores inside functions called from `if`/`||`): every
# step checks its own result and calls `die` on failure. They are safe under
# `set -u`. Every ensure_* function is idempotent and says what it does.

# Source only once.
if [[ -n "${GATEHOUSE_LIB_SOURCED:-}" ]]; then
  return 0
fi
GATEHOUSE_LIB_SOURCED=1

# Repository root: the parent of the folder holding this file.
GATEHOUSE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GATEHOUSE_ROOT

GATEHOUSE_DOCKERD_LOG="${GATEHOUSE_DOCKERD_LOG:-/tmp/gatehouse-dockerd.log}"
GATEHOUSE_DOCKERD_WAIT="${GATEHOUSE_DOCKERD_WAIT:-30}"

# say MESSAGE... — progress message on stderr.
say() {
  printf '[gatehouse] %s\n' "$*" >&2
}

# die MESSAGE... — error message on stderr, then exit 1.
die() {
  printf '[gatehouse] error: %s\n' "$*" >&2
  exit 1
}

is_root() {
  [[ "$(id -u)" -eq 0 ]]
}

is_debian() {
  [[ -r /etc/debian_version ]] && command -v apt-get >/dev/null 2>&1
}

# _gatehouse_apt_install PACKAGE... — quiet, non-interactive apt-get install
# (runs `apt-get update` once per shell first). Root on Debian only.
_GATEHOUSE_APT_UPDATED=""
_gatehouse_apt_install() {
  is_root || die "installing $* needs root (run: sudo apt-get install -y $*)"
  is_debian || die "installing $* needs apt-get (Debian/Ubuntu); install $* yourself"
  local apt_opts=(-qq -y -o Dpkg::Use-Pty=0)
  if [[ -z "$_GATEHOUSE_APT_UPDATED" ]]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update >/dev/null \
      || die "apt-get update failed"
    _GATEHOUSE_APT_UPDATED=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install "$@" >/dev/null \
    || die "apt-get install $* failed"
}

_gatehouse_docker_answers() {
  command -v docker >/dev/null 2>&1 && timeout 10 docker version >/dev/null 2>&1
}

# _gatehouse_host_dockerd_pids — the dockerd processes of this network namespace: the machine's own
# engine, not a second engine in its own netns (scripts/second-docker-host.sh), which is also named
# dockerd and must not pass for the main one.
_gatehouse_host_dockerd_pids() {
  local pid own
  own="$(readlink /proc/self/ns/net 2>/dev/null)" || return 0
  for pid in $(pgrep -x dockerd 2>/dev/null); do
    [[ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" == "$own" ]] && printf '%s\n' "$pid"
  done
  return 0
}

# _gatehouse_drop_stale_bridge_ports [BRIDGE...] — run only while no engine runs in this netns: the veths
# still plugged into Docker's bridges (default: docker0 and br-<id>) are left by an engine that died
# without cleaning up while the machine kept its kernel state. Their far ends keep the addresses and
# MACs (02:42:<ip>) their containers had, so when the new engine gives a container the same address
# the bridge goes on delivering its traffic to the dead port: the NATS container listens, yet every
# connection is refused. No container owns them any more (dockerd removes a dead engine's containers
# when it starts), so they are deleted, which deletes their far ends too.
_gatehouse_drop_stale_bridge_ports() {
  command -v ip >/dev/null 2>&1 || return 0
  local bridges=("$@") br port
  if ((${#bridges[@]} == 0)); then
    mapfile -t bridges < <(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' |
      sed 's/@.*//' | grep -E '^(docker0|br-[0-9a-f]{12})$')
  fi
  for br in "${bridges[@]}"; do
    for port in $(ip -o link show master "$br" type veth 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'); do
      say "removing $port: left plugged into $br by a Docker engine that no longer runs"
      ip link del "$port" 2>/dev/null || say "could not remove $port; a container given its old address may be unreachable"
    done
  done
  return 0
}

# ensure_docker_engine — make sure `docker version` answers: install docker.io
# (root on Debian) if dockerd is missing, start dockerd in the background if no
# engine answers (there is no systemd here), and wait for it.
ensure_docker_engine() {
  if _gatehouse_docker_answers; then
    say "docker engine is running"
    return 0
  fi

  if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    if ! is_root; then
      die "no Docker engine answers and dockerd is not installed; install Docker (e.g. 'sudo apt-get install -y docker.io'), start it, and make sure this user may use it (docker group), then run again"
    fi
    is_debian || die "no Docker engine answers and dockerd is not installed; install and start Docker, then run again"
    say "dockerd is not installed; installing Debian's docker.io"
    _gatehouse_apt_install docker.io
  fi

  if ! is_root; then
    die "no Docker engine answers at ${DOCKER_HOST:-unix:///var/run/docker.sock}; start dockerd (e.g. 'sudo dockerd &' or 'sudo systemctl start docker') or check your access to its socket, then run again"
  fi

  local running
  running="$(_gatehouse_host_dockerd_pids | paste -sd ' ')"
  if [[ -n "$running" ]]; then
    say "dockerd is already running (pid $running) but does not answer yet; waiting for it"
  else
    _gatehouse_drop_stale_bridge_ports
    say "starting dockerd in the background (log: $GATEHOUSE_DOCKERD_LOG)"
    # Own session, so that ^C on this script or the end of its process group
    # does not take the daemon down with it.
    if command -v setsid >/dev/null 2>&1; then
      nohup setsid dockerd >"$GATEHOUSE_DOCKERD_LOG" 2>&1 </dev/null &
    else
      nohup dockerd >"$GATEHOUSE_DOCKERD_LOG" 2>&1 </dev/null &
    fi
  fi

  local i
  for ((i = 1; i <= GATEHOUSE_DOCKERD_WAIT; i++)); do
    if _gatehouse_docker_answers; then
      say "docker engine answers after ${i}s"
      return 0
    fi
    sleep 1
  done
  if [[ -s "$GATEHOUSE_DOCKERD_LOG" ]]; then
    say "last lines of $GATEHOUSE_DOCKERD_LOG:"
    tail -n 20 "$GATEHOUSE_DOCKERD_LOG" >&2 || true
  fi
  die "docker engine did not answer within ${GATEHOUSE_DOCKERD_WAIT}s"
}

# ensure_crun — the crun OCI runtime, registered with the local Docker engine as `crun` (sandboxes
# start in about half of runc's time there: orchestrator/src/sandbox/oci-runtime.ts). Root on Debian
# only; anywhere else it says what to do and goes on (runc works, only slower). Installs Debian's
# crun, checks it can start a container on this host at all (_gatehouse_crun_runs), adds {"runtimes":{"crun":{"path":…}}} to /etc/docker/daemon.json (merged, other keys kept),
# and asks a running engine to reload it with SIGHUP: dockerd 20.10 re-reads `runtimes` on reload
# (daemon/reload_unix.go reloadPlatform), so no restart. It leaves alone an engine whose command line
# names another --config-file or adds runtimes itself (the file would conflict with its flags and
# stop its next start), and a daemon.json it cannot parse. Run before ensure_docker_engine: an
# engine that starts then reads the file.
ensure_crun() {
  if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != "unix:///var/run/docker.sock" ]]; then
    say "crun: DOCKER_HOST names another engine; register crun there yourself (docs/warm-pool.md)"
    return 0
  fi
  if ! is_root || ! is_debian; then
    command -v crun >/dev/null 2>&1 || say "crun is not installed; sandboxes start under runc (slower): install crun and register it in /etc/docker/daemon.json"
    return 0
  fi
  command -v crun >/dev/null 2>&1 || _gatehouse_apt_install crun
  local crun_path
  crun_path="$(command -v crun)" || die "crun is still not on the PATH after installing it"
  if ! _gatehouse_crun_runs "$crun_path"; then
    say "crun cannot start a container on this host (${_GATEHOUSE_CRUN_WHY:-unknown reason}); it is not registered and sandboxes start under runc"
    return 0
  fi
  local pid args
  for pid in $(_gatehouse_host_dockerd_pids); do
    args="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    if [[ "$args" == *--config-file* || "$args" == *--add-runtime* ]]; then
      say "crun: dockerd (pid $pid) runs with its own --config-file or --add-runtime; register crun there yourself"
      return 0
    fi
  done
  local file=/etc/docker/daemon.json changed
  changed="$(node -e '
    const fs = require("fs");
    const [file, path] = process.argv.slice(1);
    let cfg = {};
    try { cfg = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { if (e.code !== "ENOENT") { console.log("unreadable"); process.exit(0); } }
    if (typeof cfg !== "object" || cfg === null || Array.isArray(cfg)) { console.log("unreadable"); process.exit(0); }
    if (cfg.runtimes && cfg.runtimes.crun) { console.log("kept"); process.exit(0); }
    cfg.runtimes = { ...(cfg.runtimes || {}), crun: { path } };
    fs.mkdirSync(require("path").dirname(file), { recursive: true });
    fs.writeFileSync(file + ".gatehouse-tmp", JSON.stringify(cfg, null, 2) + "\n");
    fs.renameSync(file + ".gatehouse-tmp", file);
    console.log("written");
  ' "$file" "$crun_path")" || die "could not update $file"
  case "$changed" in
    unreadable)
      say "crun: $file is not a JSON object; add \"runtimes\": {\"crun\": {\"path\": \"$crun_path\"}} yourself"
      return 0
      ;;
    written) say "crun: registered in $file" ;;
  esac
  _gatehouse_docker_answers || return 0 # not running: it reads the file when it starts
  if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"crun"'; then
    return 0
  fi
  for pid in $(_gatehouse_host_dockerd_pids); do
    say "crun: asking dockerd (pid $pid) to reload its configuration (SIGHUP; nothing restarts)"
    kill -HUP "$pid" 2>/dev/null || true
  done
  local i
  for ((i = 1; i <= 10; i++)); do
    if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"crun"'; then
      say "crun: the Docker engine lists crun"
      return 0
    fi
    sleep 1
  done
  say "crun: the Docker engine does not list crun after a reload; sandboxes start under runc (restart dockerd to pick it up)"
}

# _gatehouse_crun_runs CRUN — whether crun can start a container here at all: it runs /bin/true in
# a bundle over the host's root, read-only. Debian 12's crun 1.8.1 refuses a host with cgroups in
# hybrid mode ("cgroups in hybrid mode not supported"), and an engine told to use it would fail
# every sandbox start, so it is only registered once this passes. Sets _GATEHOUSE_CRUN_WHY.
_GATEHOUSE_CRUN_WHY=""
_gatehouse_crun_runs() {
  local crun="$1" dir id out rc
  dir="$(mktemp -d)" || return 1
  id="gatehouse-crun-probe-$$"
  out="$(cd "$dir" && "$crun" spec 2>&1 && node -e '
    const fs = require("fs");
    const c = JSON.parse(fs.readFileSync("config.json", "utf8"));
    c.process.terminal = false;
    c.process.args = ["/bin/true"];
    c.root = { path: "/", readonly: true };
    fs.writeFileSync("config.json", JSON.stringify(c));
  ' 2>&1 && timeout 20 "$crun" run --bundle "$dir" "$id" 2>&1)"
  rc=$?
  "$crun" delete -f "$id" >/dev/null 2>&1 || true
  rm -rf "$dir"
  _GATEHOUSE_CRUN_WHY="$(printf '%s' "$out" | tail -n 1)"
  return "$rc"
}

# ensure_npm_deps — `npm ci` at the repository root when node_modules is
# missing or older than package-lock.json.
ensure_npm_deps() {
  local lock="$GATEHOUSE_ROOT/package-lock.json"
  local stamp="$GATEHOUSE_ROOT/node_modules/.package-lock.json"
  local reason=""
  command -v npm >/dev/null 2>&1 || die "npm is not on the PATH; install Node.js 20 (with npm) first"
  [[ -f "$lock" ]] || die "$lock is missing"
  if [[ ! -d "$GATEHOUSE_ROOT/node_modules" ]]; then
    reason="node_modules is missing"
  elif [[ ! -f "$stamp" ]]; then
    reason="node_modules/.package-lock.json is missing"
  elif [[ "$lock" -nt "$stamp" ]]; then
    reason="package-lock.json is newer than node_modules"
  fi
  if [[ -z "$reason" ]]; then
    say "npm dependencies are up to date"
    return 0
  fi
  say "$reason; running npm ci in $GATEHOUSE_ROOT"
  (cd "$GATEHOUSE_ROOT" && npm ci --no-audit --no-fund) || die "npm ci failed"
}

# ensure_test_registry — the npm registry (verdaccio) the setup-phase tests run, installed on its own
# in test/registry (see its package.json for why it is not a workspace dependency). Tests only.
ensure_test_registry() {
  local dir="$GATEHOUSE_ROOT/test/registry"
  local stamp="$dir/node_modules/.package-lock.json"
  if [[ -f "$stamp" && ! "$dir/package-lock.json" -nt "$stamp" && -x "$dir/node_modules/.bin/verdaccio" ]]; then
    say "test registry (verdaccio) is installed"
    return 0
  fi
  say "installing the test registry (verdaccio) in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund) || die "npm ci in $dir failed"
}

# ensure_debootstrap — install debootstrap if missing (root on Debian only).
ensure_debootstrap() {
  if command -v debootstrap >/dev/null 2>&1; then
    say "debootstrap is installed"
    return 0
  fi
  say "debootstrap is not installed; installing it"
  _gatehouse_apt_install debootstrap
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is still not on the PATH after installing it"
}

# ensure_patchelf — install patchelf if missing (root on Debian only): the sandbox runtime
# (images/sandbox/assemble-runtime.sh) points the host's node and git at their own loader.
ensure_patchelf() {
  if command -v patchelf >/dev/null 2>&1; then
    return 0
  fi
  say "patchelf is not installed; installing it"
  _gatehouse_apt_install patchelf
  command -v patchelf >/dev/null 2>&1 || die "patchelf is still not on the PATH after installing it"
}

# ensure_sshd — /usr/sbin/sshd, installing Debian's openssh-server if missing (root on Debian
# only): the second Docker host (scripts/second-docker-host.sh) is an ssh:// engine too. The package
# would start the system's sshd on every interface; a policy-rc.d that denies it is put in place for
# the install when there is none, so only the test's own sshd ever runs.
ensure_sshd() {
  [[ -x /usr/sbin/sshd ]] && return 0
  say "openssh-server is not installed; installing it (the second Docker host's ssh:// engine)"
  local policy=/usr/sbin/policy-rc.d placed=''
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && placed=1
  fi
  _gatehouse_apt_install openssh-server || true
  [[ -n "$placed" ]] && rm -f "$policy"
  [[ -x /usr/sbin/sshd ]] || die "sshd is still not installed after installing openssh-server"
}

# ensure_chromium — install Debian's chromium if missing (root on Debian only): the report's
# rendering test (orchestrator/test/report/report-browser.test.ts) loads the Markdown report in a
# real browser, driven by playwright-core, whose own browser download cannot work offline.
ensure_chromium() {
  if command -v chromium >/dev/null 2>&1; then
    return 0
  fi
  say "chromium is not installed; installing it (the report's browser test uses it)"
  _gatehouse_apt_install chromium
  command -v chromium >/dev/null 2>&1 || die "chromium is still not on the PATH after installing it"
}
