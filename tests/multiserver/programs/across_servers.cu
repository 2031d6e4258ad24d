// Devices of several cricket servers in one program (CRICKET_SERVER=a,b): what the program sees and
// what crosses servers. Modes (argv[1]):
//   list      every device: "device I name UUID pci BUS"
//   kernels   a kernel on each device writes its own values; each is copied back and checked
//   copies    ARGV[2], ARGV[3]: two devices; cudaMemcpyPeer both ways, cudaMemcpyPeerAsync and
//             cudaMemcpy with cudaMemcpyDefault between them, the data checked; peer access answers
//   wait      ARGV[2], ARGV[3]: a slow kernel on device A records an event; a stream of device B
//             waits for it, then records its own; once B's event is done, A's must be as well
//   fork      ARGV[2], ARGV[3]: kernels and a copy between the two devices before fork(), in the
//             child (its own sessions with every server) and in the parent after the child
//   threads   ARGV[2], ARGV[3]: two host threads, one per device, each allocating, launching,
//             copying back and checking in a loop at the same time
//   survive   ARGV[2] (to lose), ARGV[3] (to keep): work on both, "READY", a line on stdin (the
//             test kills the first one's server meanwhile), then the lost device's calls fail
//             and the kept device goes on working
//   capture   ARGV[2], ARGV[3]: devices of two servers, whose first streams get the same server
//             handles; work on the legacy stream while a non-blocking stream of A captures is
//             allowed, while a blocking stream of B captures it is cudaErrorStreamCaptureImplicit
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

__global__ void fill(int *out, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

__global__ void spin(int *out, int rounds)
{
    int v = threadIdx.x;
    for (int r = 0; r < rounds; ++r) v = v * 1103515245 + 12345;
    out[threadIdx.x] = v;
}

static const int N = 1 << 16;

static int *filled(int device, int base)
{
    CHECK(cudaSetDevice(device));
    int *d = nullptr;
    CHECK(cudaMalloc(&d, N * sizeof(int)));
    fill<<<(N + 255) / 256, 256>>>(d, N, base);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    return d;
}

static int check_values(const char *what, const int *d, int base)
{
    std::vector<int> h(N);
    CHECK(cudaMemcpy(h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += h[i] != base + i;
    printf("%s: %d of %d wrong\n", what, wrong, N);
    return wrong != 0;
}

static int list()
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    printf("devices %d\n", count);
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p;
        CHECK(cudaGetDeviceProperties(&p, d));
        char uuid[33];
        for (int i = 0; i < 16; ++i) snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)p.uuid.bytes[i]);
        char bus[32];
        CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        printf("device %d %s %s pci %s\n", d, p.name, uuid, bus);
    }
    return 0;
}

static int kernels()
{
    int count = 0, bad = 0;
    CHECK(cudaGetDeviceCount(&count));
    std::vector<int *> bufs;
    for (int d = 0; d < count; ++d) bufs.push_back(filled(d, 1000000 * (d + 1)));
    for (int d = 0; d < count; ++d) {           // read back after all ran: each kept its own
        char what[64];
        snprintf(what, sizeof what, "device %d kernel", d);
        CHECK(cudaSetDevice(d));
        bad |= check_values(what, bufs[d], 1000000 * (d + 1));
        CHECK(cudaFree(bufs[d]));
    }
    return report("kernels on every device", bad);
}

static int copies(int a, int b)
{
    int bad = 0, can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, a, b));
    printf("can access peer %d->%d: %d\n", a, b, can);
    CHECK(cudaSetDevice(a));
    cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
    printf("enable peer access %d->%d: %s\n", a, b, cudaGetErrorName(e));
    cudaGetLastError();
    int *da = filled(a, 7), *db = filled(b, 900000);
    int *ta = nullptr, *tb = nullptr;
    CHECK(cudaSetDevice(a));
    CHECK(cudaMalloc(&ta, N * sizeof(int)));
    CHECK(cudaSetDevice(b));
    CHECK(cudaMalloc(&tb, N * sizeof(int)));
    CHECK(cudaSetDevice(a));
    CHECK(cudaMemcpyPeer(tb, b, da, a, N * sizeof(int)));       // a -> b
    bad |= check_values("peer copy a->b", tb, 7);
    CHECK(cudaMemcpyPeer(ta, a, db, b, N * sizeof(int)));       // b -> a
    bad |= check_values("peer copy b->a", ta, 900000);
    CHECK(cudaMemset(tb, 0, N * sizeof(int)));
    CHECK(cudaMemcpy(tb, da, N * sizeof(int), cudaMemcpyDefault));
    bad |= check_values("cudaMemcpyDefault a->b", tb, 7);
    CHECK(cudaMemset(ta, 0, N * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));                                // a stream of device a
    CHECK(cudaMemcpyPeerAsync(ta + 1, a, db + 1, b, (N - 2) * sizeof(int), s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<int> h(N);
    CHECK(cudaMemcpy(h.data(), ta, N * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = h[0] != 0 || h[N - 1] != 0;
    for (int i = 1; i < N - 1; ++i) wrong += h[i] != 900000 + i;
    printf("peer copy async b->a (offset): %d wrong\n", wrong);
    bad |= wrong != 0;
    CHECK(cudaStreamDestroy(s));
    return report("copies between the two devices", bad);
}

static int seen[256];

static void CUDART_CB snapshot(void *host)          // in sb's order: after a's event
{
    memcpy(seen, host, sizeof seen);
}

static int wait(int a, int b, int rounds)
{
    int *out = nullptr, *host = nullptr;
    cudaStream_t sa, sb;
    cudaEvent_t ea, eb;
    CHECK(cudaSetDevice(a));
    CHECK(cudaMalloc(&out, 256 * sizeof(int)));
    CHECK(cudaMallocHost(&host, 256 * sizeof(int)));
    memset(host, 0, 256 * sizeof(int));
    CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&ea, cudaEventDisableTiming));
    spin<<<1, 256, 0, sa>>>(out, rounds);
    CHECK(cudaMemcpyAsync(host, out, 256 * sizeof(int), cudaMemcpyDeviceToHost, sa));
    CHECK(cudaEventRecord(ea, sa));
    CHECK(cudaSetDevice(b));
    CHECK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    CHECK(cudaStreamWaitEvent(sb, ea, 0));
    CHECK(cudaLaunchHostFunc(sb, snapshot, host));
    CHECK(cudaEventCreateWithFlags(&eb, cudaEventDisableTiming));
    CHECK(cudaEventRecord(eb, sb));
    CHECK(cudaEventSynchronize(eb));
    CHECK(cudaDeviceSynchronize());        // b: no error kept from the wait
    cudaError_t qa = cudaEventQuery(ea);   // eb came after ea in sb: ea is complete
    int wrong = 0;
    for (int t = 0; t < 256; ++t) {        // what a's kernel wrote, as the host function saw it
        int v = t;
        for (int r = 0; r < rounds; ++r) v = v * 1103515245 + 12345;
        wrong += seen[t] != v;
    }
    printf("after b's event: a's event %s; the host function in b's stream saw %d of 256 values wrong\n",
           cudaGetErrorName(qa), wrong);
    return report("a stream waits for another server's event", qa != cudaSuccess || wrong != 0);
}

static int survive(int lost, int kept)
{
    int *dl = filled(lost, 5), *dk = filled(kept, 11);
    int bad = check_values("lost device before", dl, 5) | check_values("kept device before", dk, 11);
    printf("READY\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 1;
    CHECK(cudaSetDevice(lost));
    int *more = nullptr;
    cudaError_t e1 = cudaMalloc(&more, 4096);
    std::vector<int> h(N);
    cudaError_t e2 = cudaMemcpy(h.data(), dl, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("lost device: cudaMalloc %s, cudaMemcpy %s\n", cudaGetErrorName(e1), cudaGetErrorName(e2));
    cudaGetLastError();
    CHECK(cudaSetDevice(kept));
    fill<<<(N + 255) / 256, 256>>>(dk, N, 77);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    bad |= check_values("kept device after", dk, 77);
    int *fresh = filled(kept, 300);
    bad |= check_values("kept device new buffer", fresh, 300);
    bad |= e1 == cudaSuccess || e2 == cudaSuccess;
    return report("one server lost, the other's device works", bad);
}

static int across(const char *who, int a, int b, int base)
{
    int *da = filled(a, base), *db = nullptr;
    CHECK(cudaSetDevice(b));
    CHECK(cudaMalloc(&db, N * sizeof(int)));
    CHECK(cudaMemcpyPeer(db, b, da, a, N * sizeof(int)));
    char what[64];
    snprintf(what, sizeof what, "%s: device %d from device %d", who, b, a);
    int bad = check_values(what, db, base);
    CHECK(cudaFree(db));
    CHECK(cudaSetDevice(a));
    CHECK(cudaFree(da));
    return bad;
}

static int forked(int a, int b)
{
    int bad = across("parent before fork", a, b, 10);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int child = across("child", b, a, 20);
        fflush(stdout);
        _exit(child);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    bad |= across("parent after the child", a, b, 30);
    return report("fork with devices of two servers", bad);
}

static int threads(int a, int b)
{
    int bad[2] = {0, 0};
    auto work = [&](int slot, int device) {
        for (int round = 0; round < 8; ++round) {
            int base = 100000 * (slot + 1) + round;
            int *d = filled(device, base);
            std::vector<int> h(N);
            CHECK(cudaMemcpy(h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost));
            for (int i = 0; i < N; ++i) bad[slot] += h[i] != base + i;
            CHECK(cudaFree(d));
            int current = -1;
            CHECK(cudaGetDevice(&current));
            bad[slot] += current != device;
        }
    };
    std::thread t0(work, 0, a), t1(work, 1, b);
    t0.join();
    t1.join();
    printf("thread on device %d: %d wrong; thread on device %d: %d wrong\n", a, bad[0], b, bad[1]);
    return report("two threads on devices of two servers", bad[0] || bad[1]);
}

// Work on the legacy stream of device while its stream s captures: the memset's answer.
static cudaError_t legacy_while_capturing(int device, cudaStream_t s)
{
    CHECK(cudaSetDevice(device));
    int *d = nullptr;
    CHECK(cudaMalloc(&d, 256));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaError_t legacy = cudaMemsetAsync(d, 0, 256, cudaStreamLegacy);
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(s, &graph) == cudaSuccess) CHECK(cudaGraphDestroy(graph));
    cudaGetLastError();
    CHECK(cudaFree(d));
    return legacy;
}

static int capture(int a, int b)
{
    cudaStream_t nonblocking_a, blocking_b, later_b, later_a;
    CHECK(cudaSetDevice(a));
    CHECK(cudaStreamCreateWithFlags(&nonblocking_a, cudaStreamNonBlocking));   // a's first stream
    CHECK(cudaSetDevice(b));
    CHECK(cudaStreamCreate(&blocking_b));                                        // b's first stream
    CHECK(cudaStreamDestroy(blocking_b));
    CHECK(cudaStreamCreate(&later_b));                                           // b's second
    CHECK(cudaSetDevice(a));
    CHECK(cudaStreamCreateWithFlags(&later_a, cudaStreamNonBlocking));           // a's second
    cudaError_t on_a = legacy_while_capturing(a, nonblocking_a);
    cudaError_t on_b = legacy_while_capturing(b, later_b);
    printf("legacy-stream work while a non-blocking stream of device %d captures: %s\n", a, cudaGetErrorName(on_a));
    printf("legacy-stream work while a blocking stream of device %d captures: %s\n", b, cudaGetErrorName(on_b));
    return report("capture and the legacy stream on two servers",
                  on_a != cudaSuccess || on_b != cudaErrorStreamCaptureImplicit);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "list";
    int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 1;
    if (!strcmp(mode, "list")) return list();
    if (!strcmp(mode, "kernels")) return kernels();
    if (!strcmp(mode, "copies")) return copies(a, b);
    if (!strcmp(mode, "wait")) return wait(a, b, argc > 4 ? atoi(argv[4]) : 20000);
    if (!strcmp(mode, "fork")) return forked(a, b);
    if (!strcmp(mode, "threads")) return threads(a, b);
    if (!strcmp(mode, "survive")) return survive(a, b);
    if (!strcmp(mode, "capture")) return capture(a, b);
    printf("FAIL: unknown mode %s\n", mode);
    return 2;
}
