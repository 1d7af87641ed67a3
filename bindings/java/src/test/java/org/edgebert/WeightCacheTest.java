// SPDX-License-Identifier: Apache-2.0
// WeightCacheTest: Model.load with a packed-weight cache file and Model.memory, as edgebert.h
// documents them: the first load writes the file, the next maps it, a damaged file is rebuilt, an
// unwritable path leaves the model working; outputs are identical with and without the cache. On
// XNNPACK 2022 (no packed weights held by the model) every cache request is UNAVAILABLE.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WeightCacheTest {
  static final String MODEL = TestData.ebm("h128_4x32", "int8");
  static final int[] IDS = {101, 160, 140, 487, 476, 470, 102};

  static float[] hidden(Model m) {
    try (Session s = m.newSession(1, 0)) {
      s.runIds(IDS, null, null);
      return s.output(Output.LAST_HIDDEN_STATE);
    }
  }

  // Loading with the cache gives `state` with a reason, and the outputs of the plain model.
  static void assertExplainedState(String model, String cache, int state, float[] want) {
    try (Model m = Model.load(model, cache)) {
      WeightCache wc = m.weightCache();
      assertEquals(state, wc.state, wc.toString());
      assertFalse(wc.message.isEmpty());
      assertArrayEquals(want, hidden(m));
    }
  }

  static boolean hasCacheApi() {
    try (Model m = Model.load(MODEL)) {
      hidden(m);  // a session packs into the model's shared copy (without a cache path)
      return m.memory().packedWeightBytes > 0;
    }
  }

  @Test
  void memoryReportsTheFileSize() throws Throwable {
    Support.assumeImplemented(() -> Model.load(MODEL).memory());
    try (Model m = Model.load(MODEL)) {
      assertEquals(new File(MODEL).length(), m.memory().modelFileBytes);
      assertEquals(WeightCache.NONE, m.weightCache().state);
    }
  }

  @Test
  void createdThenLoadedWithIdenticalOutputs(@TempDir Path dir) throws Throwable {
    Support.assumeImplemented(() -> Model.load(MODEL).weightCache());
    String cache = dir.resolve("h128.ebwc").toString();
    float[] want;
    try (Model m = Model.load(MODEL)) {
      want = hidden(m);
    }
    boolean api = hasCacheApi();
    try (Model m = Model.load(MODEL, cache)) {
      WeightCache wc = m.weightCache();
      assertEquals(api ? WeightCache.CREATED : WeightCache.UNAVAILABLE, wc.state, wc.toString());
      assertArrayEquals(want, hidden(m));
      if (!api) {
        assertFalse(wc.message.isEmpty());
        return;
      }
    }
    assertTrue(new File(cache).length() > 0);
    try (Model m = Model.load(MODEL, cache)) {
      assertEquals(WeightCache.LOADED, m.weightCache().state, m.weightCache().toString());
      assertArrayEquals(want, hidden(m));
    }
    try (RandomAccessFile f = new RandomAccessFile(cache, "rw")) {
      f.setLength(f.length() / 2);  // truncated: rebuilt, saying why
    }
    assertExplainedState(MODEL, cache, WeightCache.CREATED, want);
  }

  @Test
  void unwritablePathLeavesTheModelWorking(@TempDir Path dir) throws Throwable {
    Support.assumeImplemented(() -> Model.load(MODEL).weightCache());
    Path blocker = Files.write(dir.resolve("a_file"), new byte[] {1});
    String cache = blocker.resolve("c.ebwc").toString();  // a folder that is a file
    float[] want;
    try (Model m = Model.load(MODEL)) {
      want = hidden(m);
    }
    assertExplainedState(MODEL, cache, WeightCache.UNAVAILABLE, want);
  }

  @Test
  void badCachePathIsAnArgumentError() throws IOException {
    Support.expect(EdgeBertException.INVALID_ARGUMENT, () -> Model.load(MODEL, "a\0b"));
  }
}
