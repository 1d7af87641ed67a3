#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest spdx_script: scripts/add_spdx.sh on a small made-up tree (no git): each file type gets
# the expected first lines, shebangs and Package.swift's tools-version line stay first, data
# files are untouched, modes are kept, a second run changes nothing, and --check lists exactly
# the files that lack the line.
# usage: tests/scripts/test_add_spdx.sh SOURCE_DIR WORK_DIR
set -euo pipefail
SRC=$1 W=$2
rm -rf "$W"
mkdir -p "$W/src/sub" "$W/src/tests/fuzz/corpus/fuzz_x" "$W/src/build/gen"
cd "$W/src"
printf '#!/usr/bin/env bash\necho hi\n' > run && chmod +x run
printf '#!/usr/bin/env python3\n"""doc"""\n' > tool.py && chmod +x tool.py
printf '// swift-tools-version:5.9\nimport PackageDescription\n' > Package.swift
printf 'int main(void) { return 0; }\n' > main.c
printf '/* C header */\nint f(void);\n' > api.h
printf '// C++ header\n#pragma once\n' > sub/impl.h
printf 'int g() { return 1; }' > sub/impl.cpp  # no final newline
printf 'cmake_minimum_required(VERSION 3.18)\n' > CMakeLists.txt
printf 'class A {}\n' > sub/A.java
printf '[a]\nb = 1\n' > sub/cfg.toml
printf 'plain data\n' > tests/fuzz/corpus/fuzz_x/seed
printf 'notes\n' > README.md
printf 'int gen;\n' > build/gen/gen.cpp
printf '// SPDX-License-Identifier: Apache-2.0\nint done;\n' > has.cpp
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # file expected-content
  [ "$(cat "$1")" = "$(printf "$2")" ] || { echo "--- $1:"; cat "$1"; fail "$1 differs"; }
}
L='SPDX-License-Identifier: Apache-2.0'
out=$(bash "$SRC/scripts/add_spdx.sh" --check . || true)
for f in run tool.py Package.swift main.c api.h sub/impl.h sub/impl.cpp CMakeLists.txt sub/A.java sub/cfg.toml; do
  grep -qx "  $f" <<< "$out" || fail "--check does not list $f: $out"
done
for f in has.cpp README.md tests/fuzz/corpus/fuzz_x/seed build/gen/gen.cpp; do
  grep -q "$f" <<< "$out" && fail "--check lists $f"
done
bash "$SRC/scripts/add_spdx.sh" --check . > /dev/null && fail "--check exits 0 with files missing"
bash "$SRC/scripts/add_spdx.sh" . > /dev/null
expect run "#!/usr/bin/env bash\n# $L\necho hi"
expect tool.py "#!/usr/bin/env python3\n# $L\n\"\"\"doc\"\"\""
expect Package.swift "// swift-tools-version:5.9\n// $L\nimport PackageDescription"
expect main.c "/* $L */\nint main(void) { return 0; }"
expect api.h "/* $L */\n/* C header */\nint f(void);"
expect sub/impl.h "// $L\n// C++ header\n#pragma once"
expect sub/impl.cpp "// $L\nint g() { return 1; }"
expect CMakeLists.txt "# $L\ncmake_minimum_required(VERSION 3.18)"
expect sub/A.java "// $L\nclass A {}"
expect sub/cfg.toml "# $L\n[a]\nb = 1"
expect has.cpp "// $L\nint done;"
expect README.md "notes"
expect tests/fuzz/corpus/fuzz_x/seed "plain data"
expect build/gen/gen.cpp "int gen;"
[ -x run ] && [ -x tool.py ] || fail "executable bit lost"
before=$(find . -type f -exec md5sum {} + | sort)
bash "$SRC/scripts/add_spdx.sh" . > /dev/null
[ "$before" = "$(find . -type f -exec md5sum {} + | sort)" ] || fail "second run changed files"
bash "$SRC/scripts/add_spdx.sh" --check . > /dev/null || fail "--check fails after adding"
[ -z "$(find . -name "*.spdx.*")" ] || fail "temporary file left behind"
echo "add_spdx.sh: all checks passed"
