// Eight threads make their first runtime call at once (each gets the primary context current
// through the export tables), then cudaDeviceReset and one more call.
#include <cstdio>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
int main() {
    std::vector<std::thread> ts; int fails = 0;
    for (int i = 0; i < 8; i++) ts.emplace_back([&]{ int l, g; if (cudaDeviceGetStreamPriorityRange(&l, &g) != cudaSuccess || g != -5) __atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED); });
    for (auto &t : ts) t.join();
    printf("thread_failures %d\n", fails);
    printf("reset %d\n", (int)cudaDeviceReset());
    int l, g;
    printf("after_reset %d\n", (int)cudaDeviceGetStreamPriorityRange(&l, &g));
}
