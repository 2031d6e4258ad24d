// Synchronous cudaMemcpy between pinned memory (cudaMallocHost) and the device, in the plain case
// and in the cases beside it, for tests/client_runtime/test_pinned_copy.py. One line per case,
// "PASS name" or "FAIL name: why"; the exit status is the number of failures.
//   pinned_copy_cases          the copies (sizes, offsets, after kernels, after deferred copies,
//                              with printf output pending, errors and the last error)
//   pinned_copy_cases fault    a kernel writes far out of bounds; the next pinned copy reports it
//   pinned_copy_cases fork     copies before a fork, in the child (its pinned memory is its own
//                              now, its session new) and in the parent after it
// Built with -DWITH_PRINTF, a kernel that prints runs before one of the copies.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures = 0;

static void result(const char *name, bool ok, const char *why = "")
{
    printf(ok ? "PASS %s\n" : "FAIL %s: %s\n", name, why);
    fflush(stdout);
    if (!ok)
        failures++;
}

static unsigned char pattern(size_t i, int seed) { return (unsigned char)(i * 131 + seed * 7 + 1); }

__global__ void fill(unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = (unsigned char)(v + i);
}

#ifdef WITH_PRINTF
__global__ void say(int round)
{
    if (threadIdx.x == 0)
        printf("device round %d\n", round);
}
#endif

__global__ void write_far(int *p)
{
    p[(blockIdx.x * blockDim.x + threadIdx.x) * 4096 + (1 << 28)] = 1;
}

static bool same(const unsigned char *h, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (h[i] != pattern(i, seed))
            return false;
    return true;
}

static int fault()
{
    int *d;
    unsigned char *h;
    if (cudaMalloc(&d, 4096) || cudaMallocHost(&h, 4096)) {
        result("fault setup", false, "allocation");
        return failures;
    }
    write_far<<<2, 64>>>(d);
    cudaError_t copy = cudaMemcpy(h, d, 4096, cudaMemcpyDeviceToHost);
    cudaError_t last = cudaGetLastError();
    cudaError_t again = cudaMemcpy(d, h, 4096, cudaMemcpyHostToDevice);
    printf("copy: %s\nlast: %s\nagain: %s\n", cudaGetErrorName(copy), cudaGetErrorName(last),
           cudaGetErrorName(again));
    result("the copy after a faulting kernel reports the fault", copy != cudaSuccess && last == copy,
           cudaGetErrorName(copy));
    result("the fault is sticky for the next pinned copy", again == copy, cudaGetErrorName(again));
    return failures;
}

static bool round_trip(unsigned char *d, unsigned char *h, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        h[i] = pattern(i, seed);
    if (cudaMemcpy(d, h, n, cudaMemcpyHostToDevice))
        return false;
    memset(h, 0, n);
    return cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) == cudaSuccess && same(h, n, seed);
}

static int forked()
{
    unsigned char *d, *h;
    if (cudaMalloc(&d, 4096) || cudaMallocHost(&h, 4096)) {
        result("fork setup", false, "allocation");
        return failures;
    }
    result("copies before the fork", round_trip(d, h, 4096, 1) && round_trip(d, h, 4096, 4), "bytes differ");
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char *dc;
        bool ok = cudaMalloc(&dc, 4096) == cudaSuccess && round_trip(dc, h, 4096, 2) &&
                  round_trip(dc, h, 4096, 5);
        result("the child's copies of its pinned memory through its own session", ok, "bytes differ");
        _exit(failures);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    result("the child exited cleanly", WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
    result("the child's writes stayed the child's", same(h, 4096, 4), "the parent's memory changed");
    result("copies in the parent after the fork", round_trip(d, h, 4096, 3), "bytes differ");
    return failures;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "fault"))
        return fault();
    if (argc > 1 && !strcmp(argv[1], "fork"))
        return forked();
    const size_t big = (4u << 20) + 4096 + 1;        // past one 4 MiB part: the general path
    unsigned char *d, *d2, *h, *h2, *pageable = (unsigned char *)malloc(big);
    if (cudaMalloc(&d, big) || cudaMalloc(&d2, big) || cudaMallocHost(&h, big + 8192) ||
        cudaMallocHost(&h2, big)) {
        result("setup", false, "allocation");
        return failures;
    }

    // Sizes and offsets in the allocation: each copied up and back into zeroed memory.
    const size_t sizes[] = {1, 4095, 4096, 16384, 65536 + 3, 4u << 20, big};
    const size_t offsets[] = {0, 4096 + 3};
    for (size_t s : sizes)
        for (size_t off : offsets) {
            char name[96];
            snprintf(name, sizeof name, "round trip of %zu bytes at offset %zu", s, off);
            int seed = (int)(s + off);
            for (size_t i = 0; i < s; i++)
                h[off + i] = pattern(i, seed);
            cudaError_t up = cudaMemcpy(d, h + off, s, cudaMemcpyHostToDevice);
            memset(h + off, 0, s);
            cudaError_t down = cudaMemcpy(h + off, d, s, cudaMemcpyDeviceToHost);
            result(name, up == cudaSuccess && down == cudaSuccess && same(h + off, s, seed),
                   up || down ? cudaGetErrorName(up ? up : down) : "bytes differ");
        }

    // A copy after kernels on the default stream sees what they wrote, every time.
    bool after_kernels = true;
    for (int round = 0; round < 50 && after_kernels; round++) {
        fill<<<4, 128>>>(d, 4096, (unsigned char)round);
        if (cudaMemcpy(h, d, 4096, cudaMemcpyDeviceToHost))
            after_kernels = false;
        for (size_t i = 0; i < 4096 && after_kernels; i++)
            after_kernels = h[i] == (unsigned char)(round + i);
    }
    result("a pinned copy after a kernel sees its output", after_kernels, "stale bytes");

    // An asynchronous copy into pinned memory lands before a synchronous copy reads that memory.
    fill<<<4, 128>>>(d2, 4096, 77);
    memset(h2, 0, 4096);
    cudaMemcpyAsync(h2, d2, 4096, cudaMemcpyDeviceToHost, 0);
    cudaError_t up = cudaMemcpy(d, h2, 4096, cudaMemcpyHostToDevice);
    memset(h, 0, 4096);
    cudaError_t down = cudaMemcpy(h, d, 4096, cudaMemcpyDeviceToHost);
    bool landed = up == cudaSuccess && down == cudaSuccess;
    for (size_t i = 0; i < 4096 && landed; i++)
        landed = h[i] == (unsigned char)(77 + i);
    result("a deferred copy into pinned memory lands before a copy from it", landed, "stale bytes");

#ifdef WITH_PRINTF
    // A pinned copy after a kernel that prints: the kernel's lines come before the program's next.
    // (Built with -DWITH_PRINTF only: a module that prints makes every synchronising call fetch
    // the output, and the plain case is a module that does not.)
    say<<<1, 32>>>(1);
    cudaError_t printed = cudaMemcpy(h, d, 4096, cudaMemcpyDeviceToHost);
    printf("host after round 1\n");
    result("a pinned copy after a printing kernel succeeds", printed == cudaSuccess,
           cudaGetErrorName(printed));
#endif

    // cudaMemcpyDefault and pageable memory take the general path and move the same bytes.
    for (size_t i = 0; i < 4096; i++)
        h[i] = pattern(i, 9);
    cudaError_t dflt = cudaMemcpy(d, h, 4096, cudaMemcpyDefault);
    cudaError_t down2 = cudaMemcpy(pageable, d, 4096, cudaMemcpyDeviceToHost);
    result("cudaMemcpyDefault from pinned memory, back to pageable memory",
           dflt == cudaSuccess && down2 == cudaSuccess && same(pageable, 4096, 9), "bytes differ");

    // Errors: a device range that does not exist; the error is the last error, read once.
    cudaError_t bad = cudaMemcpy(d + big - 100, h, 4096, cudaMemcpyHostToDevice);
    cudaError_t last = cudaGetLastError();
    cudaError_t cleared = cudaGetLastError();
    cudaError_t bad_kind = cudaMemcpy(d, h, 4096, (cudaMemcpyKind)7);
    cudaError_t last_kind = cudaGetLastError();
    printf("out of range: %s, kind 7: %s\n", cudaGetErrorName(bad), cudaGetErrorName(bad_kind));
    result("a copy past the device allocation fails and is the last error",
           bad == cudaErrorInvalidValue && last == bad && cleared == cudaSuccess, cudaGetErrorName(bad));
    result("a copy of an unknown kind fails and is the last error",
           bad_kind == cudaErrorInvalidMemcpyDirection && last_kind == bad_kind, cudaGetErrorName(bad_kind));
    cudaError_t after = cudaMemcpy(d, h, 4096, cudaMemcpyHostToDevice);
    result("a copy after a failed one succeeds", after == cudaSuccess, cudaGetErrorName(after));

    // A zero-byte copy succeeds and moves nothing.
    result("a zero-byte copy succeeds", cudaMemcpy(d, h, 0, cudaMemcpyHostToDevice) == cudaSuccess, "");

    cudaFreeHost(h);
    cudaFreeHost(h2);
    // Freed pinned memory is no longer the server's: a copy to it is an ordinary one.
    unsigned char *h3;
    cudaMallocHost(&h3, 4096);
    for (size_t i = 0; i < 4096; i++)
        h3[i] = pattern(i, 3);
    cudaError_t up3 = cudaMemcpy(d, h3, 4096, cudaMemcpyHostToDevice);
    memset(h3, 0, 4096);
    cudaError_t down3 = cudaMemcpy(h3, d, 4096, cudaMemcpyDeviceToHost);
    result("a new pinned allocation after frees copies right",
           up3 == cudaSuccess && down3 == cudaSuccess && same(h3, 4096, 3), "bytes differ");
    cudaFreeHost(h3);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures;
}
