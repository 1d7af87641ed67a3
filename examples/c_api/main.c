/* SPDX-License-Identifier: Apache-2.0 */
/* edgebert C API example: loads a model, runs one sentence, prints the output shape and the
   first values of the first token. Builds against an installed edgebert (CMake package or
   pkg-config, see CMakeLists.txt and docs/cross-compiling.md).
   usage: edgebert_example MODEL.ebm ["text"] */
#include <edgebert/edgebert.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.ebm [\"text\"]\n", argv[0]);
    return 2;
  }
  const char* text = argc > 2 ? argv[2] : "edge inference without allocations";
  char err[256];
  eb_model* model;
  if (eb_model_load_file(argv[1], &model, err, sizeof err) != EB_OK) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  eb_session_options opt;
  eb_session_options_init(&opt);
  opt.num_threads = 2;           /* worker threads including the caller */
  opt.max_sequence_length = 128; /* the arena is planned for this */
  eb_session* s;
  if (eb_session_create(model, &opt, &s, err, sizeof err) != EB_OK) {
    fprintf(stderr, "%s\n", err);
    eb_model_free(model);
    return 1;
  }
  if (eb_session_run_text(s, text) != EB_OK) {
    fprintf(stderr, "%s\n", eb_session_last_error(s));
    eb_session_destroy(s);
    eb_model_free(model);
    return 1;
  }
  const float* hidden;
  int64_t shape[2];
  int32_t rank;
  if (eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &hidden, shape, &rank) != EB_OK) {
    fprintf(stderr, "%s\n", eb_session_last_error(s));
    eb_session_destroy(s);
    eb_model_free(model);
    return 1;
  }
  printf("edgebert %s: last_hidden_state %lld tokens x %lld\n", eb_version(), (long long)shape[0],
         (long long)shape[1]);
  printf("token 0:");
  for (int64_t i = 0; i < 4 && i < shape[1]; ++i) printf(" %.5f", hidden[i]);
  printf("\n");
  eb_session_destroy(s);
  eb_model_free(model);
  return 0;
}
