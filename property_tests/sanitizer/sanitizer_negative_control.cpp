// sanitizer_negative_control.cpp: one deliberate defect per mode, so that the asan and tsan presets show that a finding
// fails the run (the negative control of "clean under the sanitizers"); never built into a normal configuration.
//   sanitizer_negative_control heap-overflow | signed-overflow | leak | race
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

volatile int g_index = 8;      // volatile: the compiler must not see the defect coming
volatile int g_big = 0x7FFFFFFF;
int g_shared = 0;

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "heap-overflow") == 0) {
    int* p = new int[8];
    p[g_index] = 1;  // one past the end
    std::printf("%d\n", p[0]);
    delete[] p;
  } else if (std::strcmp(mode, "signed-overflow") == 0) {
    const int x = g_big;
    std::printf("%d\n", x + 1);  // UB: INT_MAX + 1
  } else if (std::strcmp(mode, "leak") == 0) {
    int* p = static_cast<int*>(std::malloc(4096));
    p[0] = g_index;
    std::printf("%p\n", static_cast<void*>(p));
    p = nullptr;
  } else if (std::strcmp(mode, "race") == 0) {
    std::thread a([] { for (int i = 0; i < 100000; ++i) ++g_shared; });
    std::thread b([] { for (int i = 0; i < 100000; ++i) ++g_shared; });
    a.join();
    b.join();
    std::printf("%d\n", g_shared);
  } else {
    std::fprintf(stderr, "usage: sanitizer_negative_control heap-overflow|signed-overflow|leak|race\n");
    return 2;
  }
  return 0;
}
