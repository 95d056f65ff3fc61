/* dying_plugins.c: host plugins of bias_gelu_tanh whose process ends without the audit's verdict, one per -D<kind>:
 * EXIT0_ON_CALL (_exit(0) in its first call), EXIT2_ON_CALL (_exit(2): the status of a setup error, said by no one),
 * FORGED_RESULT (writes a truncated result file where the audit's child writes its own, then _exit(0)),
 * EXIT0_AT_LOAD (_exit(0) while it is loaded). The audit must report FAIL (exit 1) for each, never PASS or exit 0/2.
 * EXIT0_IN_SHAPES forwards every call to the plugin at FORWARD_PLUGIN (the built-in emulation) but _exit(0)s in the
 * shapes class's call of 65,537 x 64: the classes before it keep their results, the one it dies in is a FAIL, and
 * those after it run in children of their own (the table group of the audit's engine).
 * STATE_AFTER_CALLS forwards every call too, but flips one output bit of that shapes call when the process has made
 * 16 calls before it: it FAILs shapes after the widths class in one process, and passes shapes alone. */
#include "kernels/fuseproof_kernel_abi.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(FORGED_RESULT)
/* The path after --child-spec in this process's command line, with ".result.json" appended. */
static void forge_result(void) {
  char args[8192];
  FILE* f = fopen("/proc/self/cmdline", "rb");
  if (!f) return;
  const size_t n = fread(args, 1, sizeof args - 1, f);
  fclose(f);
  args[n] = '\0';
  for (size_t i = 0; i < n; i += strlen(args + i) + 1) {
    if (strcmp(args + i, "--child-spec") != 0) continue;
    const char* spec = args + i + strlen(args + i) + 1;
    char path[4096];
    snprintf(path, sizeof path, "%s.result.json", spec);
    FILE* out = fopen(path, "w");
    if (out) {
      fputs("{\"check\": {\"class\": \"rejection\", \"status\": \"pa", out);
      fclose(out);
    }
    /* --no-isolation: the one child's class results are files of their own beside its spec. */
    for (const char* cls = "rejection_bf16\0rejection_fp16\0"; *cls; cls += strlen(cls) + 1) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s", spec);
      char* slash = strrchr(dir, '/');
      if (!slash) continue;
      *slash = '\0';
      snprintf(path, sizeof path, "%s/%s.json.result.json", dir, cls);
      out = fopen(path, "w");
      if (out) {
        fputs("{}", out);
        fclose(out);
      }
    }
  }
}
#endif

#if defined(EXIT0_IN_SHAPES) || defined(STATE_AFTER_CALLS)
#include <dlfcn.h>
#include <stdint.h>
static int call(const fuseproof_call_t* c) {
  static fuseproof_kernel_call_fn forward = NULL;
  static long calls = 0;
  const int shapes_call = c->shape[0] == 65537 && c->shape[1] == 64;
#if defined(EXIT0_IN_SHAPES)
  if (shapes_call) _exit(0);
#endif
  if (!forward) {
    void* h = dlopen(FORWARD_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    fuseproof_kernel_descriptor_fn d = h ? (fuseproof_kernel_descriptor_fn)dlsym(h, "fuseproof_kernel_descriptor") : NULL;
    if (!d) return 1;
    forward = d()->call;
  }
  const int rc = forward(c);
#if defined(STATE_AFTER_CALLS)
  /* Wrong only in a process that has made 16 calls before: one bit of the shapes call's first element. */
  if (rc == 0 && shapes_call && calls >= 16) ((uint16_t*)c->out)[0] ^= 1;
#endif
  ++calls;
  return rc;
}
#else
static int call(const fuseproof_call_t* c) {
  (void)c;
#if defined(EXIT0_ON_CALL)
  _exit(0);
#elif defined(EXIT2_ON_CALL)
  _exit(2);
#elif defined(FORGED_RESULT)
  forge_result();
  _exit(0);
#else
  return 1;
#endif
}
#endif

#if defined(EXIT0_AT_LOAD)
__attribute__((constructor)) static void at_load(void) { _exit(0); }
#endif

static const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "dying plugin", "bias_gelu_tanh", "eager",
    FUSEPROOF_MEMORY_HOST, 16, &call,
};
FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
