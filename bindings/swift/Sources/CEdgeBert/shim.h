/* SPDX-License-Identifier: Apache-2.0 */
/* shim.h: the C API for the CEdgeBert module: this checkout's edgebert.h when the package sits in
 * the edgebert repository (EDGEBERT_BUILD_DIR builds), else the installed <edgebert/edgebert.h>
 * (pkg-config adds its include folder). */
#if __has_include("../../../../runtime/include/edgebert/edgebert.h")
#include "../../../../runtime/include/edgebert/edgebert.h"
#else
#include <edgebert/edgebert.h>
#endif
