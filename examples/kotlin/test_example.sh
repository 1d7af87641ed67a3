#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest: compiles Example.kt with kotlinc against the edgebert jar, runs it on a test model and
# checks what it prints (token count and output shape of a known input).
# usage: test_example.sh KOTLINC JAVA EDGEBERT_JAR LIBEDGEBERT_JNI OUT_DIR MODEL.ebm
set -euo pipefail
KOTLINC=$1 JAVA=$2 JAR=$3 JNI=$4 OUT=$5 MODEL=$6
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
# Debian's kotlinc 1.3 warns about the missing kotlin-stdlib-jdk7/jdk8 jars: harmless here.
"$KOTLINC" "$HERE/Example.kt" -cp "$JAR" -include-runtime -d "$OUT/example.jar" 2>&1 \
  | { grep -v "^warning: unable to find kotlin-stdlib" || true; }
out=$("$JAVA" -Dedgebert.jni.library="$JNI" -cp "$OUT/example.jar:$JAR" ExampleKt "$MODEL" "the movie was good")
echo "$out"
# [CLS] the movie was good [SEP]: 6 tokens; the test models have hidden size 128.
grep -qx "tokens: 6, last_hidden_state: 6x128" <<<"$out"
# A bad model path: exit status 1 and the C status (2 = EB_ERROR_IO) on stderr.
set +e
err=$("$JAVA" -Dedgebert.jni.library="$JNI" -cp "$OUT/example.jar:$JAR" ExampleKt /nonexistent.ebm x 2>&1 >/dev/null)
rc=$?
set -e
echo "$err"
[ $rc -eq 1 ] && grep -q "^edgebert error 2: " <<<"$err"
