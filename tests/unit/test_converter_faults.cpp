// SPDX-License-Identifier: Apache-2.0
// test_converter_faults.cpp: edgebert-convert under hostile conditions: an output folder it cannot
// write, a full disk (RLIMIT_FSIZE in the child, so the write fails with EFBIG; the converter
// ignores SIGXFSZ), and a checkpoint that is truncated or removed while it is being read. Every
// case must end in exit status 1 with a one-line error, or (when the damage came after reading)
// in a complete, loadable model; never in a signal, and never with a partial or temporary file
// left in the output folder.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

using namespace edgebert::test;

namespace {

std::string tool() {
  const char* d = std::getenv("EDGEBERT_BIN");
  return std::string(d ? d : "build") + "/edgebert-convert";
}

// A fresh folder under the test data, removed with everything in it when the test case ends.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = testdata_dir() + "/converter-faults-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    REQUIRE(mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

struct Outcome {
  bool exited = false;  // false: killed by a signal
  int code = -1;
  int signal = 0;
  std::string stderr_text;
};

// Runs edgebert-convert with `args` in a child, optionally with a file-size limit; `during` is
// called in the parent right after the child started (the child's pid is passed).
// stderr goes through a pipe (a file would be subject to the child's file-size limit).
template <class F>
Outcome run_convert(const std::vector<std::string>& args, rlim_t fsize_limit, F&& during) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (fsize_limit != RLIM_INFINITY) {
      const rlimit lim{fsize_limit, fsize_limit};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    std::vector<char*> argv;
    const std::string exe = tool();
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  during(pid);
  Outcome o;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) o.stderr_text.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  o.exited = WIFEXITED(status);
  o.code = o.exited ? WEXITSTATUS(status) : -1;
  o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return o;
}

Outcome run_convert(const std::vector<std::string>& args, rlim_t fsize_limit) {
  return run_convert(args, fsize_limit, [](pid_t) {});
}

bool one_error_line(const Outcome& o) {
  return o.exited && o.code == 1 && o.stderr_text.find("edgebert-convert: error: ") == 0 &&
         o.stderr_text.find('\n') == o.stderr_text.size() - 1;
}

void copy_file(const std::string& from, const std::string& to) {
  const std::vector<uint8_t> bytes = read_bytes(from);
  FILE* f = std::fopen(to.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  REQUIRE(std::fclose(f) == 0);
}

}  // namespace

TEST_CASE("an output folder that cannot be written gives one error line and no file", "[converter][fault]") {
  const std::string in = testdata_dir() + "/tiny_f16";
  const TempDir temp;
  const std::string& work = temp.path;
  const std::string not_a_dir = work + "/plain-file";
  copy_file(in + "/config.json", not_a_dir);
  for (const std::string& out : {std::string("/nonexistent-edgebert-dir/model.ebm"), not_a_dir + "/model.ebm",
                                 std::string("/proc/edgebert-model.ebm")}) {
    const Outcome o = run_convert({"--input", in, "--output", out, "--quiet"}, RLIM_INFINITY);
    INFO(out << ": " << o.stderr_text);
    CHECK(one_error_line(o));
    CHECK(o.stderr_text.find(out) != std::string::npos);
  }
  if (geteuid() != 0) {  // root ignores directory permissions
    const std::string ro = work + "/read-only";
    REQUIRE(mkdir(ro.c_str(), 0555) == 0);
    const Outcome o = run_convert({"--input", in, "--output", ro + "/m.ebm", "--quiet"}, RLIM_INFINITY);
    CHECK(one_error_line(o));
    CHECK(list_dir(ro).empty());
  }
}

TEST_CASE("a full disk (file size limit) gives one error line and no partial file", "[converter][fault]") {
  const std::string in = testdata_dir() + "/tiny_f16";
  const TempDir temp;
  const std::string& work = temp.path;
  const std::string out_dir = work + "/out";
  REQUIRE(mkdir(out_dir.c_str(), 0755) == 0);
  for (rlim_t limit : {rlim_t{0}, rlim_t{4096}, rlim_t{64 * 1024}}) {
    const Outcome o =
        run_convert({"--input", in, "--output", out_dir + "/model.ebm", "--quiet"}, limit);
    INFO("limit " << limit << ": signal " << o.signal << ", " << o.stderr_text);
    CHECK(o.signal == 0);  // SIGXFSZ must not kill it
    CHECK(one_error_line(o));
    CHECK(o.stderr_text.find("File too large") != std::string::npos);
    CHECK(list_dir(out_dir).empty());  // neither the model nor its temporary file
  }
}

TEST_CASE("a checkpoint truncated or removed while being read gives a clean result", "[converter][fault]") {
  const std::string src = testdata_dir() + "/base2_h12";
  const TempDir temp;
  const std::string& work = temp.path;
  long failed = 0, converted = 0;
  for (int damage = 0; damage < 2; ++damage) {  // 0: truncate to half, 1: remove
    for (long delay_us : {0L, 2000L, 10000L, 40000L, 150000L}) {
      const std::string in = work + "/ckpt";
      const std::string out_dir = work + "/out";
      mkdir(in.c_str(), 0755);
      mkdir(out_dir.c_str(), 0755);
      for (const char* f : {"config.json", "vocab.txt", "tokenizer_config.json", "model.safetensors"})
        copy_file(src + "/" + f, in + "/" + f);
      const std::string weights = in + "/model.safetensors", out = out_dir + "/model.ebm";
      const Outcome o = run_convert({"--input", in, "--output", out, "--quiet"}, RLIM_INFINITY,
                                    [&](pid_t) {
                                      const timespec ts{0, delay_us * 1000};
                                      nanosleep(&ts, nullptr);
                                      if (damage == 0) {
                                        struct stat st;
                                        if (stat(weights.c_str(), &st) == 0) REQUIRE(truncate(weights.c_str(), st.st_size / 2) == 0);
                                      } else {
                                        unlink(weights.c_str());
                                      }
                                    });
      INFO((damage == 0 ? "truncated" : "removed") << " after " << delay_us << " us: signal " << o.signal << ", exit "
                                                   << o.code << ", " << o.stderr_text);
      CHECK(o.signal == 0);
      const std::vector<std::string> left = list_dir(out_dir);
      if (o.exited && o.code == 0) {
        ++converted;
        REQUIRE(left.size() == 1);  // the complete model and nothing else
        ModelHandle m;
        char err[512];
        CHECK(eb_model_load_file(out.c_str(), &m.m, err, sizeof err) == EB_OK);
      } else {
        ++failed;
        CHECK(one_error_line(o));
        CHECK(left.empty());
      }
      unlink(out.c_str());
      for (const char* f : {"config.json", "vocab.txt", "tokenizer_config.json", "model.safetensors"})
        unlink((in + "/" + f).c_str());
    }
  }
  std::printf("checkpoint damaged mid-conversion: %ld clean errors, %ld complete models\n", failed, converted);
}
