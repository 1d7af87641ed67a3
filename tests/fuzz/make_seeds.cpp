// make_seeds.cpp: writes the fuzz_model seed corpus (the tiny int8 and fp32 models of
// tiny_model.h) into the folder given as argument. Run by hand when the model format changes:
//   cmake --build build/dev --target fuzz_make_seeds && build/dev/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus/fuzz_model
#include <cstdio>
#include <string>
#include <vector>

#include "tiny_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  for (bool int8 : {true, false}) {
    const std::vector<uint8_t> bytes = edgebert::fuzz::make_tiny_model(int8);
    const std::string path = std::string(argv[1]) + (int8 ? "/tiny_int8.ebm" : "/tiny_fp32.ebm");
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "%s: cannot write\n", path.c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  }
  return 0;
}
