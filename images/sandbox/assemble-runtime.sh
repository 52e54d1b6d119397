#!/usr/bin/env bash
# Assemble the build context of gatehouse's runtime image (`gatehouse/runtime:<hash>`):
#
#   images/sandbox/assemble-runtime.sh OUT_DIR
#
# OUT_DIR/opt/gatehouse/ gets what every sandbox needs whatever its toolchain image holds:
#   agent.mjs            the daemon's entry point: runs daemon.cjs through V8's code cache
#   load-daemon.mjs      how agent.mjs and make-code-cache.mjs load it
#   daemon.cjs           the bundled daemon (scripts/build.mjs)
#   daemon.cjs.cache     its code cache, made here by this node (make-code-cache.mjs)
#   prepare.mjs          the run image's preparation step (user 10001, /workspace, /var/gatehouse)
#   openssl.cnf          empty: the OpenSSL configuration the runtime's node is started with
#   bin/git              the git wrapper, first on the command PATH
#   runtime/bin/node     the host's node and git, patched with patchelf to load their own loader and
#   runtime/bin/git      libraries from runtime/lib (DT_RPATH, which beats LD_LIBRARY_PATH, on
#   runtime/lib/         every binary and library), so neither the image's libc version nor whether
#                        it has node or git matters
#   runtime/libexec/git-core/git, runtime/share/git-core/templates/
#                        git's exec path and templates (GIT_EXEC_PATH / GIT_TEMPLATE_DIR point here)
# and OUT_DIR/Dockerfile, `FROM scratch` + one COPY. Needs patchelf (installed if missing).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

[[ $# -eq 1 && -n "$1" ]] || {
  echo "usage: $0 OUT_DIR" >&2
  exit 2
}
out="$1"
here="$GATEHOUSE_ROOT/images/sandbox"
prefix=/opt/gatehouse/runtime
root="$out/opt/gatehouse"

[[ -f "$here/build/daemon.cjs" ]] || die "images/sandbox/build/daemon.cjs is missing: run 'npm run build' first"
ensure_patchelf

node_bin="$(readlink -f "$(command -v node)")" || die "node is not on the PATH"
git_bin="$(readlink -f "$(command -v git)")" || die "git is not on the PATH"
git_templates="$(git --exec-path)/../../share/git-core/templates"
[[ -d "$git_templates" ]] || git_templates=/usr/share/git-core/templates

rm -rf "$out"
mkdir -p "$root/bin" "$root/runtime/bin" "$root/runtime/lib" "$root/runtime/libexec/git-core" \
  "$root/runtime/share/git-core"
install -m 0644 "$here/agent.mjs" "$root/agent.mjs"
install -m 0644 "$here/load-daemon.mjs" "$root/load-daemon.mjs"
install -m 0644 "$here/build/daemon.cjs" "$root/daemon.cjs"
install -m 0644 "$here/prepare.mjs" "$root/prepare.mjs"
install -m 0755 "$here/bin/git" "$root/bin/git"
install -m 0755 "$node_bin" "$root/runtime/bin/node"
install -m 0755 "$git_bin" "$root/runtime/bin/git"
ln -s ../../bin/git "$root/runtime/libexec/git-core/git"
if [[ -d "$git_templates" ]]; then
  cp -rL "$git_templates" "$root/runtime/share/git-core/templates"
else
  mkdir -p "$root/runtime/share/git-core/templates"
fi

# The shared libraries both binaries load (ldd resolves the whole tree), copied under their names.
loader=
while read -r name target; do
  case "$name" in
    linux-vdso.so.*) continue ;;
    */ld-linux*.so.* | ld-linux*.so.*) loader="$target" ;;
  esac
  [[ -n "$target" && -f "$target" ]] || die "ldd could not resolve $name"
  install -m 0755 "$(readlink -f "$target")" "$root/runtime/lib/$(basename "$name")"
done < <(ldd "$node_bin" "$git_bin" | awk '
  $2 == "=>" && $3 ~ /^\// { print $1, $3; next }
  $1 ~ /^\// && $1 ~ /ld-linux/ { print $1, $1 }
' | sort -u)
[[ -n "$loader" ]] || die "no dynamic loader found in ldd's output for $node_bin"
loader_name="$(basename "$loader")"
[[ -f "$root/runtime/lib/$loader_name" ]] || install -m 0755 "$(readlink -f "$loader")" "$root/runtime/lib/$loader_name"

# glibc's loader reads /etc/ld.so.preload whatever else it is told, and in a sandbox that is the
# toolchain image's file: every root process of the runtime (the daemon, its git, the run image's
# preparation step) would load the libraries it names. The copied loader is given, in its place, a
# path of the same length where no file can ever be (below /dev/null, which is not a folder).
loader_copy="$root/runtime/lib/$loader_name"
grep -q -a -F /etc/ld.so.preload "$loader_copy" || die "the dynamic loader $loader names no /etc/ld.so.preload to take out"
sed -i 's#/etc/ld\.so\.preload#/dev/null/preload_#g' "$loader_copy"
! grep -q -a -F /etc/ld.so.preload "$loader_copy" || die "could not take /etc/ld.so.preload out of $loader_copy"

# node reads OpenSSL's default configuration at start (OPENSSLDIR/openssl.cnf, the toolchain
# image's /etc/ssl here, whose nodejs_conf section can load a provider library): the runtime's node
# is always started with this empty one instead (--openssl-config, which also beats OPENSSL_CONF).
printf '# gatehouse: the runtime node loads no OpenSSL configuration of the image it runs in.\n' >"$root/openssl.cnf"

for bin in "$root/runtime/bin/node" "$root/runtime/bin/git"; do
  patchelf --set-interpreter "$prefix/lib/$loader_name" --force-rpath --set-rpath "$prefix/lib" "$bin" \
    || die "patchelf failed on $bin"
done
for lib in "$root"/runtime/lib/*; do
  [[ "$(basename "$lib")" == "$loader_name" ]] && continue
  patchelf --force-rpath --set-rpath "$prefix/lib" "$lib" || die "patchelf failed on $lib"
done

# Run both through the copied loader once here: a missing library shows now, not in a sandbox.
"$root/runtime/lib/$loader_name" --library-path "$root/runtime/lib" "$root/runtime/bin/node" --version >/dev/null \
  || die "the assembled node does not run"
"$root/runtime/lib/$loader_name" --library-path "$root/runtime/lib" "$root/runtime/bin/git" --version >/dev/null \
  || die "the assembled git does not run"

# The daemon's code cache, made by the node it is for (after the check above: that node runs).
run_node() { "$root/runtime/lib/$loader_name" --library-path "$root/runtime/lib" "$root/runtime/bin/node" "$@"; }
run_node "$here/make-code-cache.mjs" "$root" || die "making the daemon's code cache failed"
cache_check="$(run_node "$here/make-code-cache.mjs" "$root" --check)" || die "loading the daemon with its code cache failed"
[[ "$cache_check" == used ]] || die "a fresh node did not use the daemon's code cache ($cache_check)"

cat >"$out/Dockerfile" <<'DOCKERFILE'
# gatehouse runtime: only a carrier for /opt/gatehouse, copied into every derived run image.
FROM scratch
LABEL org.opencontainers.image.title=gatehouse-runtime \
      org.opencontainers.image.description="gatehouse daemon, git wrapper and a self-contained node and git"
COPY opt/gatehouse /opt/gatehouse
DOCKERFILE
say "assembled the runtime in $out ($(du -sh "$out" | cut -f1); node $("$node_bin" --version), $(git --version))"
