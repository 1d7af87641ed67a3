# SPDX-License-Identifier: Apache-2.0
# peer_setup.sh: sourced by the peer scripts (run_modernbert_peer.sh, run_llm_peer.sh).
# peer_setup DEST SHARED: installs the Debian packages the peers need (scripts/install_deps.sh
# --peers: onnx for the ONNX models, node), copies SHARED (../shared/peers) to DEST when DEST/node is missing,
# installs onnxruntime-node there as its run_all.sh does, and puts Debian's OpenBLAS (unpacked under
# DEST) on LD_LIBRARY_PATH: torch 1.13 links libblas.so.3, which is netlib's reference BLAS here.
peer_setup() {
  local dest=$1 shared=$2 ob deb
  "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/install_deps.sh" --peers
  [ -d "$dest/node" ] || cp -r "$shared" "$dest"
  [ -d "$dest/node/node_modules/onnxruntime-node" ] ||
    (cd "$dest/node" && timeout 600 npm install --ignore-scripts --no-audit --no-fund >/dev/null)
  ob=$dest/build/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp
  if [ ! -e "$ob/libblas.so.3" ]; then
    mkdir -p "$dest/build/deb"
    (cd "$dest/build/deb" && timeout 120 apt-get download libopenblas0-openmp >/dev/null 2>&1) || true
    deb=$(ls "$dest"/build/deb/libopenblas0-openmp_*.deb 2>/dev/null | head -1 || true)
    [ -n "$deb" ] && dpkg -x "$deb" "$dest/build/openblas"
  fi
  if [ -e "$ob/libblas.so.3" ]; then export LD_LIBRARY_PATH=$ob${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
}
