#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak: edgebert-soak on a model with 2 worker threads, lengths 1..max, N runs (CI: a short run;
# the long one for docs/reliability.md is `scripts/reliability/soak.sh BUILD MODEL 100000`).
# Fails unless allocations = 0, RssAnon delta = 0 kB and every output is bit-identical.
# Usage: scripts/reliability/soak.sh BUILD_DIR [MODEL.ebm (BUILD/testdata/ebm/h128_4x32.int8.ebm)] [RUNS (1500)]
set -euo pipefail
BUILD=$1
MODEL=${2:-$BUILD/testdata/ebm/h128_4x32.int8.ebm}
RUNS=${3:-1500}
cmake --build "$BUILD" --target edgebert-soak
"$BUILD/edgebert-soak" --model "$MODEL" --runs "$RUNS" --threads 2
