#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes host-side wrappers for the Debian 13 build's tools (their binaries need Debian 13's
# glibc, so they run inside the root): OUT_DIR/edgebert-{convert,run,bench,inspect} run
# build/debian13/edgebert-* through scripts/debian13/root.sh, with every argument that names a
# path inside this checkout (and the working directory) rewritten to the root's /src view. Lets host-side harnesses (the peer
# benchmark, bench/edgebert_peer.py --bin OUT_DIR) use the Debian 13 build; their files must live
# inside the checkout (e.g. build/peers).
# usage: scripts/debian13/wrap_tools.sh OUT_DIR
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: $0 OUT_DIR}
mkdir -p "$OUT"
for tool in convert run bench inspect; do
  cat > "$OUT/edgebert-$tool" <<WRAP
#!/usr/bin/env bash
P='$SRC/'
args=()
for a in "\$@"; do args+=("\${a//"\$P"//src/}"); done
cwd=\${PWD//"\$P"//src/}
exec "$SRC/scripts/debian13/root.sh" -- sh -c 'cd "\$0" && exec "\$@"' "\$cwd" /src/build/debian13/edgebert-$tool "\${args[@]}"
WRAP
  chmod +x "$OUT/edgebert-$tool"
done
echo "wrappers in $OUT"
