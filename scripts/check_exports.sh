#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that a shared libedgebert exports the C API and nothing else: every defined dynamic
# symbol must be eb_* (the C++ internals, template instantiations and static dependencies stay
# hidden; runtime/edgebert.map does that at link time).
# usage: scripts/check_exports.sh NM LIBEDGEBERT_SO      (NM: nm, or e.g. aarch64-linux-gnu-nm)
set -euo pipefail
NM=$1 LIB=$2
syms=$("$NM" -D --defined-only "$LIB" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)
api=$(grep -c '^eb_' <<< "$syms" || true)
other=$(grep -v '^eb_' <<< "$syms" || true)
if [ -n "$other" ]; then
  echo "$LIB exports $(wc -l <<< "$other") symbols besides the C API:" >&2
  head -20 <<< "$other" >&2
  exit 1
fi
if [ "$api" -lt 10 ]; then
  echo "$LIB exports only $api eb_* symbols (expected the whole C API)" >&2
  exit 1
fi
echo "$LIB: exports $api symbols, all eb_*"
