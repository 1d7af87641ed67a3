#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Gives every source file of ours the license line `SPDX-License-Identifier: Apache-2.0` as its
# first line (after a shebang, or after Package.swift's `// swift-tools-version` line), in the
# comment form of its type:
#   //  C++ (.cpp .cc .hpp, .h unless it opens with /*), Java, Kotlin, Swift, FlatBuffers schema,
#       module maps
#   /* */  C (.c, and .h files that open with a /* comment)
#   #   Python, shell (.sh, or no extension with a sh/bash shebang), CMake (CMakeLists.txt,
#       .cmake, .cmake.in), TOML
# "Ours" = the files git tracks (without git, or when SOURCE_DIR is not the top of a git work
# tree: every file outside build*/ and .git); the fuzz corpora and regression inputs are data,
# not sources. Idempotent: a file that has the line within its first 3 lines is left alone;
# mode and everything else in the file are kept.
# With --check it changes nothing, lists the files that lack the line, and exits 1 if any do
# (the CTest test spdx_headers).
# usage: scripts/add_spdx.sh [--check] [SOURCE_DIR (this checkout)]
set -euo pipefail
CHECK=0
if [ "${1:-}" = "--check" ]; then CHECK=1; shift; fi
ROOT=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$ROOT"
ID="SPDX-License-Identifier: Apache-2.0"

list_files() {
  # git only when ROOT is a work tree's top (not a folder inside some other checkout)
  if [ "$(git rev-parse --show-toplevel 2> /dev/null)" = "$(pwd -P)" ]; then
    git ls-files -z
  else
    find . \( -path ./.git -o -path './build*' -o -name __pycache__ \) -prune -o -type f -print0 |
      sed -z 's|^\./||'
  fi
}

# Prints the comment form for FILE: "//", "/*" or "#"; nothing when it is not a source file.
style_of() {
  local f=$1 base=${1##*/}
  case "$f" in tests/fuzz/corpus/* | tests/fuzz/regressions/*) return ;; esac
  case "$base" in
    CMakeLists.txt | *.cmake | *.cmake.in | *.py | *.sh | *.toml) echo "#" ;;
    *.cpp | *.cc | *.hpp | *.java | *.kt | *.kts | *.swift | *.fbs | *.modulemap) echo "//" ;;
    *.c) echo "/*" ;;
    *.h) if head -c 2 "$f" | grep -q '^/\*'; then echo "/*"; else echo "//"; fi ;;
    *.*) ;;
    *) if head -n 1 "$f" | grep -Eq '^#!.*\b(ba)?sh\b'; then echo "#"; fi ;;
  esac
}

# How many leading lines stay above the license line: a shebang, Package.swift's tools version.
keep_lines() {
  local first
  first=$(head -n 1 "$1")
  case "$first" in
    '#!'* | '// swift-tools-version'*) echo 1 ;;
    *) echo 0 ;;
  esac
}

missing=()
changed=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  # (bash built-ins first: most files have the line, and a fork per file made this slow)
  mapfile -n 3 head3 < "$f" 2> /dev/null || true
  [[ "${head3[*]:-}" == *"$ID"* ]] && continue
  style=$(style_of "$f")
  [ -n "$style" ] || continue
  if [ $CHECK -eq 1 ]; then
    missing+=("$f")
    continue
  fi
  case "$style" in
    "//") line="// $ID" ;;
    "/*") line="/* $ID */" ;;
    "#") line="# $ID" ;;
  esac
  keep=$(keep_lines "$f")
  tmp=$(mktemp "$f.spdx.XXXXXX")
  { head -n "$keep" "$f"; printf '%s\n' "$line"; tail -n +"$((keep + 1))" "$f"; } > "$tmp"
  cat "$tmp" > "$f"  # rewrite in place: keeps the file's mode
  rm -f "$tmp"
  changed=$((changed + 1))
done < <(list_files)

if [ $CHECK -eq 1 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "files without '$ID' in their first lines (scripts/add_spdx.sh adds it):"
    printf '  %s\n' "${missing[@]}"
    exit 1
  fi
  echo "every source file has '$ID'"
else
  echo "added '$ID' to $changed files"
fi
