#!/usr/bin/env bash
# A second Docker engine on this machine that behaves like a remote Docker host, for tests and the
# soak (docs/docker-hosts.md). Root only.
#
#   scripts/second-docker-host.sh start              # prints DOCKER_HOST=... lines (also in $DIR/env)
#   scripts/second-docker-host.sh load-images TAG... # copies images from the main engine (no registry)
#   scripts/second-docker-host.sh stop               # engine, containers, netns, veth and data root gone
#   scripts/second-docker-host.sh status
#
# Isolation (a second dockerd in the host's own network namespace once deleted the main engine's
# docker0 and broke every container start on it): the engine runs in its own network namespace
# (reached over a veth pair, HOST_IP <-> ENGINE_IP), its own mount namespace (so its overlay
# mounts never show up on the host), with its own data root, exec root (so its own containerd),
# pidfile, config file and cgroup parent. Its docker0 and iptables rules live inside that netns.
# It listens only on ENGINE_IP:2376 with TLS (throwaway CA and certs in $DIR/certs), so published
# ports are reached at ENGINE_IP, as on a real remote host. It has no route anywhere but the veth.
# An sshd in the same netns, bound only to ENGINE_IP:22, makes it an ssh:// engine too: a throwaway
# host key and client key in $DIR/ssh, the client key good for one thing only (its forced command
# is `docker system dial-stdio` against this engine's socket), root by key only.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NS="${GATEHOUSE_DH2_NETNS:-gatehouse-dh2}"
VETH_HOST="${GATEHOUSE_DH2_VETH:-gh-dh2-h}"
VETH_ENGINE="${VETH_HOST%-h}-e"
HOST_IP="${GATEHOUSE_DH2_HOST_IP:-10.213.0.1}"
ENGINE_IP="${GATEHOUSE_DH2_ENGINE_IP:-10.213.0.2}"
DIR="${GATEHOUSE_DH2_DIR:-/tmp/gatehouse-docker-host-2}"
WAIT="${GATEHOUSE_DH2_WAIT:-60}"
CERTS="$DIR/certs"
PIDFILE="$DIR/dockerd.pid"
DOCKER_URL="tcp://$ENGINE_IP:2376"

SSH_DIR="$DIR/ssh"
SSH_URL="ssh://root@$ENGINE_IP"

engine_env() {
  printf 'DOCKER_HOST=%s\nDOCKER_TLS_VERIFY=1\nDOCKER_CERT_PATH=%s\n' "$DOCKER_URL" "$CERTS/client"
  # The same engine over SSH: the URL, the client key (for an ssh-agent) and a known_hosts with its host key.
  printf 'DOCKER_SSH_HOST=%s\nDOCKER_SSH_KEY=%s\nDOCKER_SSH_KNOWN_HOSTS=%s\n' \
    "$SSH_URL" "$SSH_DIR/client_key" "$SSH_DIR/known_hosts"
}

# docker2 ARGS... — the docker CLI against the second engine, given up after 10 minutes (an image load).
docker2() {
  timeout 600 docker --host "$DOCKER_URL" --tlsverify --tlscacert "$CERTS/client/ca.pem" \
    --tlscert "$CERTS/client/cert.pem" --tlskey "$CERTS/client/key.pem" "$@"
}

engine_pid() {
  [[ -s "$PIDFILE" ]] || return 1
  local pid
  pid="$(cat "$PIDFILE")"
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == dockerd ]] || return 1
  printf '%s\n' "$pid"
}

make_certs() {
  [[ -s "$CERTS/client/key.pem" ]] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl is needed to make the engine's TLS certificates"
  mkdir -p "$CERTS/ca" "$CERTS/server" "$CERTS/client"
  chmod 700 "$CERTS"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=gatehouse test CA" \
    -keyout "$CERTS/ca/key.pem" -out "$CERTS/ca/ca.pem" 2>/dev/null || die "openssl: CA"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$ENGINE_IP" \
    -keyout "$CERTS/server/key.pem" -out "$CERTS/server/req.csr" 2>/dev/null || die "openssl: server key"
  printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$ENGINE_IP" >"$CERTS/server/ext.cnf"
  openssl x509 -req -days 2 -in "$CERTS/server/req.csr" -CA "$CERTS/ca/ca.pem" -CAkey "$CERTS/ca/key.pem" \
    -CAcreateserial -extfile "$CERTS/server/ext.cnf" -out "$CERTS/server/cert.pem" 2>/dev/null \
    || die "openssl: server cert"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=gatehouse test client" \
    -keyout "$CERTS/client/key.pem" -out "$CERTS/client/req.csr" 2>/dev/null || die "openssl: client key"
  printf 'extendedKeyUsage=clientAuth\n' >"$CERTS/client/ext.cnf"
  openssl x509 -req -days 2 -in "$CERTS/client/req.csr" -CA "$CERTS/ca/ca.pem" -CAkey "$CERTS/ca/key.pem" \
    -CAcreateserial -extfile "$CERTS/client/ext.cnf" -out "$CERTS/client/cert.pem" 2>/dev/null \
    || die "openssl: client cert"
  cp "$CERTS/ca/ca.pem" "$CERTS/server/ca.pem"
  cp "$CERTS/ca/ca.pem" "$CERTS/client/ca.pem"
}

make_network() {
  [[ -e "/run/netns/$NS" ]] || ip netns add "$NS" || die "ip netns add $NS failed"
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link add "$VETH_HOST" type veth peer name "$VETH_ENGINE" || die "creating veth $VETH_HOST failed"
    ip link set "$VETH_ENGINE" netns "$NS" || die "moving $VETH_ENGINE into $NS failed"
    ip addr add "$HOST_IP/30" dev "$VETH_HOST" || die "addressing $VETH_HOST failed"
  fi
  ip link set "$VETH_HOST" up
  ip netns exec "$NS" ip link set lo up
  ip netns exec "$NS" ip addr replace "$ENGINE_IP/30" dev "$VETH_ENGINE"
  ip netns exec "$NS" ip link set "$VETH_ENGINE" up
}

start_engine() {
  engine_pid >/dev/null && return 0
  mkdir -p "$DIR/data" "$DIR/exec" "$DIR/cgroup-hold"
  printf '{}\n' >"$DIR/daemon.json"
  say "starting the second dockerd in netns $NS (log: $DIR/dockerd.log)"
  # nsenter --net only (not `ip netns exec`, which remounts /sys and so hides the cgroup mounts
  # dockerd needs); a private mount namespace with a sysfs of this netns, the cgroups bound back in.
  # shellcheck disable=SC2016
  nohup setsid nsenter --net="/run/netns/$NS" -- unshare --mount --propagation slave -- sh -c '
    set -e
    mount --rbind /sys/fs/cgroup "$1/cgroup-hold"
    mount -t sysfs sysfs /sys
    mount --rbind "$1/cgroup-hold" /sys/fs/cgroup
    umount -l "$1/cgroup-hold"
    shift
    exec "$@"' sh "$DIR" \
    dockerd --config-file "$DIR/daemon.json" --data-root "$DIR/data" --exec-root "$DIR/exec" \
    --pidfile "$PIDFILE" --host "unix://$DIR/docker.sock" --host "$DOCKER_URL" \
    --tlsverify --tlscacert "$CERTS/server/ca.pem" --tlscert "$CERTS/server/cert.pem" \
    --tlskey "$CERTS/server/key.pem" --cgroup-parent /gatehouse-dh2 --shutdown-timeout 5 \
    >"$DIR/dockerd.log" 2>&1 </dev/null &
  local i
  for ((i = 1; i <= WAIT; i++)); do
    if docker2 version >/dev/null 2>&1; then
      say "second engine answers at $DOCKER_URL after ${i}s"
      return 0
    fi
    sleep 1
  done
  tail -n 20 "$DIR/dockerd.log" >&2 || true
  die "the second engine did not answer at $DOCKER_URL within ${WAIT}s"
}

start_sshd() {
  local sshd=/usr/sbin/sshd pid i docker_bin
  ensure_sshd
  docker_bin="$(command -v docker)" || die "the docker CLI is needed on the engine's side of SSH (dial-stdio)"
  mkdir -p "$SSH_DIR" /run/sshd
  chmod 700 "$SSH_DIR"
  [[ -s "$SSH_DIR/host_key" ]] || ssh-keygen -q -t ed25519 -N '' -C gatehouse-dh2-host -f "$SSH_DIR/host_key"
  [[ -s "$SSH_DIR/client_key" ]] || ssh-keygen -q -t ed25519 -N '' -C gatehouse-dh2-client -f "$SSH_DIR/client_key"
  printf 'restrict,command="%s --host unix://%s/docker.sock system dial-stdio" %s\n' \
    "$docker_bin" "$DIR" "$(cat "$SSH_DIR/client_key.pub")" >"$SSH_DIR/authorized_keys"
  printf '%s %s\n' "$ENGINE_IP" "$(cut -d' ' -f1,2 "$SSH_DIR/host_key.pub")" >"$SSH_DIR/known_hosts"
  # StrictModes off: the files live under /tmp (world-writable), which sshd's checks refuse.
  cat >"$SSH_DIR/sshd_config" <<CONF
ListenAddress $ENGINE_IP:22
HostKey $SSH_DIR/host_key
PidFile $SSH_DIR/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
AllowUsers root
PermitRootLogin forced-commands-only
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding no
AllowAgentForwarding no
AllowStreamLocalForwarding no
X11Forwarding no
PermitTunnel no
PrintMotd no
CONF
  if [[ -s "$SSH_DIR/sshd.pid" ]] && kill -0 "$(cat "$SSH_DIR/sshd.pid")" 2>/dev/null; then return 0; fi
  "$sshd" -t -f "$SSH_DIR/sshd_config" || die "the sshd configuration $SSH_DIR/sshd_config is refused"
  ip netns exec "$NS" "$sshd" -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log" || die "sshd did not start (log: $SSH_DIR/sshd.log)"
  for ((i = 1; i <= WAIT; i++)); do
    if [[ -s "$SSH_DIR/sshd.pid" ]] && ip netns exec "$NS" bash -c "exec 3<>/dev/tcp/$ENGINE_IP/22" 2>/dev/null; then
      pid="$(cat "$SSH_DIR/sshd.pid")"
      say "sshd (pid $pid) answers at $ENGINE_IP:22"
      return 0
    fi
    sleep 1
  done
  die "sshd did not answer at $ENGINE_IP:22 within ${WAIT}s (log: $SSH_DIR/sshd.log)"
}

cmd_start() {
  is_root || die "the second Docker host needs root (network namespace, dockerd)"
  ip link show docker0 >/dev/null 2>&1 || say "note: the main engine has no docker0 before start"
  mkdir -p "$DIR"
  make_certs
  make_network
  start_engine
  start_sshd
  engine_env >"$DIR/env"
  ip link show docker0 >/dev/null 2>&1 || die "the main engine's docker0 is gone after starting the second engine"
  engine_env
}

cmd_stop() {
  local pid i
  if [[ -s "$SSH_DIR/sshd.pid" ]]; then
    pid="$(cat "$SSH_DIR/sshd.pid")"
    [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == sshd ]] && kill -TERM "$pid" 2>/dev/null || true
  fi
  if pid="$(engine_pid)"; then
    say "stopping the second dockerd (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < WAIT * 2; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "dockerd $pid did not stop in ${WAIT}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # Processes still in the netns (container shims, containerd) die with it; only ours are in it.
  if [[ -e "/run/netns/$NS" ]]; then
    local left
    left="$(ip netns pids "$NS" 2>/dev/null || true)"
    if [[ -n "$left" ]]; then
      say "killing what is left in netns $NS: $(echo "$left" | paste -sd ' ')"
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null || true
      sleep 1
    fi
    ip netns del "$NS" || say "could not delete netns $NS"
  fi
  ip link del "$VETH_HOST" 2>/dev/null || true
  # The engine's mounts lived in its own mount namespace; anything under $DIR on the host is a leftover.
  if grep -q " $DIR/" /proc/mounts; then
    grep " $DIR/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l || true
  fi
  if [[ -d "$DIR" ]]; then rm -rf "$DIR" || die "could not remove $DIR"; fi
  # The engine's cgroups (--cgroup-parent): empty once it stopped; rmdir removes only empty ones.
  local cg
  for cg in /sys/fs/cgroup/*/gatehouse-dh2 /sys/fs/cgroup/gatehouse-dh2; do
    [[ -d "$cg" ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  ip link show docker0 >/dev/null 2>&1 || say "warning: the main engine has no docker0"
  say "second Docker host stopped and removed"
}

cmd_load_images() {
  [[ $# -gt 0 ]] || die "load-images needs image tags"
  engine_pid >/dev/null || die "the second engine is not running (start it first)"
  local missing=() t
  for t in "$@"; do
    docker2 image inspect "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  say "copying ${missing[*]} to the second engine"
  docker save "${missing[@]}" | docker2 load -q >/dev/null || die "copying images to the second engine failed"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  load-images)
    shift
    cmd_load_images "$@"
    ;;
  status)
    if pid="$(engine_pid)"; then
      echo "running (pid $pid) at $DOCKER_URL"
      engine_env
    else
      echo "stopped"
      exit 1
    fi
    ;;
  *) die "usage: $0 start|stop|status|load-images TAG..." ;;
esac
