// SPDX-License-Identifier: Apache-2.0
// TestData: the reference cases of tests/reference/make_testdata.py (EDGEBERT_TESTDATA): inputs,
// numpy float64 golden outputs, converted models, and the metrics the tests compare with.
package org.edgebert;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

final class TestData {
  private TestData() {}

  static Path dir() {
    String d = System.getenv("EDGEBERT_TESTDATA");
    return Paths.get(d != null ? d : "build/testdata");
  }

  static String ebm(String model, String kind) {
    return dir().resolve("ebm").resolve(model + "." + kind + ".ebm").toString();
  }

  static byte[] bytes(Path p) {
    try {
      return Files.readAllBytes(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static int[] ints(Path p) {
    String s = new String(bytes(p), StandardCharsets.US_ASCII).trim();
    if (s.isEmpty()) {
      return new int[0];
    }
    String[] parts = s.split("\\s+");
    int[] v = new int[parts.length];
    for (int i = 0; i < v.length; i++) {
      v[i] = Integer.parseInt(parts[i]);
    }
    return v;
  }

  static float[] floats(Path p) {
    ByteBuffer b = ByteBuffer.wrap(bytes(p)).order(ByteOrder.LITTLE_ENDIAN);
    float[] v = new float[b.remaining() / 4];
    b.asFloatBuffer().get(v);
    return v;
  }

  static List<String> vocab(String model) {
    try {
      return Files.readAllLines(dir().resolve(model).resolve("vocab.txt"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One reference case: token ids, mask, types and golden outputs (logits null without labels). */
  static final class Case {
    final int[] ids;
    final int[] mask;
    final int[] types;
    final float[] hidden;
    final float[] pooled;
    final float[] logits;

    Case(String model, String name) {
      Path d = dir().resolve(model).resolve("cases").resolve(name);
      ids = ints(d.resolve("ids.txt"));
      mask = ints(d.resolve("mask.txt"));
      types = ints(d.resolve("types.txt"));
      hidden = floats(d.resolve("last_hidden_state.f32"));
      pooled = floats(d.resolve("pooler_output.f32"));
      logits = Files.exists(d.resolve("logits.f32")) ? floats(d.resolve("logits.f32")) : null;
    }
  }

  static double cosine(float[] a, int aOff, float[] b, int bOff, int n) {
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < n; i++) {
      ab += (double) a[aOff + i] * b[bOff + i];
      aa += (double) a[aOff + i] * a[aOff + i];
      bb += (double) b[bOff + i] * b[bOff + i];
    }
    return ab / Math.sqrt(aa * bb);
  }

  static double maxAbsDiff(float[] a, float[] b) {
    if (a.length != b.length) {
      return Double.POSITIVE_INFINITY;
    }
    double m = 0;
    for (int i = 0; i < a.length; i++) {
      m = Math.max(m, Math.abs((double) a[i] - b[i]));
    }
    return m;
  }
}
