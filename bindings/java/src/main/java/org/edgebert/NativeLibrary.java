// SPDX-License-Identifier: Apache-2.0
// NativeLibrary: loads libedgebert_jni (the system property edgebert.jni.library may name the file).
package org.edgebert;

final class NativeLibrary {
  private NativeLibrary() {}

  private static boolean loaded;

  static synchronized void load() {
    if (loaded) {
      return;
    }
    String path = System.getProperty("edgebert.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("edgebert_jni");
    }
    loaded = true;
  }

  // The C library's version string.
  static native String version();
}
