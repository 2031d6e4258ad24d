// Random sequences of kernels and asynchronous copies on several streams, every byte checked after
// every synchronisation against a host-side model of what CUDA's stream order gives.
//
//   async_copy_stress SEED STEPS STREAMS MAX_BYTES
//
// Each stream s owns a device buffer, a pinned host buffer (cudaMallocHost) and a pageable one
// (malloc), so the order within a stream decides every result. Copy sizes are drawn around the
// client's chunk, part and slot boundaries (64 KiB, 1 MiB, 2 MiB, 4 MiB) and at random. After a
// synchronisation (stream, event, device, or a stream or event query that says done) the synchronised
// streams' host buffers must hold exactly what the model says; the program then may write new bytes
// into them, as a program refilling its staging buffers would. Exit 0 and "PASS" when every check
// held; else the first mismatch and exit 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../../examples/check.h"

__global__ void add_words(uint32_t *a, size_t n, uint32_t v) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) a[i] += v + (uint32_t)i;
}

static uint64_t rng_state;
static uint64_t next_u64() {        // splitmix64
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(next_u64() % n) : 0; }

struct Lane {
    cudaStream_t stream;
    cudaEvent_t event;
    uint32_t *dev;
    uint32_t *pinned;
    uint32_t *pageable;
    std::vector<uint32_t> mdev, mpinned, mpageable;
};

static size_t words;                // per buffer
static long checks, step_no;
static const char *last_op = "";

// A copy length in words: around a boundary (one word short, exact, one word over) or at random.
static size_t draw_len(size_t limit) {
    static const size_t boundaries[] = {1, 16, 1024, 16384, 65536, 262144, 1 << 20, 2 << 20, 3 << 20,
                                        4 << 20, 8 << 20, 12 << 20, 16 << 20};
    size_t n;
    if (next_u64() & 1) {
        size_t b = boundaries[below(sizeof boundaries / sizeof *boundaries)] / 4;
        n = b + below(3) - 1;
    } else {
        n = 1 + below(limit);
    }
    if (n == 0) n = 1;
    return n > limit ? limit : n;
}

static void fill_random(std::vector<uint32_t> &model, uint32_t *host, size_t from, size_t n) {
    for (size_t i = from; i < from + n; ++i) model[i] = (uint32_t)next_u64();
    memcpy(host + from, model.data() + from, n * 4);
}

static bool same(const char *what, int lane, const uint32_t *host, const std::vector<uint32_t> &model) {
    ++checks;
    if (memcmp(host, model.data(), words * 4) == 0) return true;
    size_t bad = 0, first = words;
    for (size_t i = 0; i < words; ++i)
        if (host[i] != model[i]) { if (first == words) first = i; ++bad; }
    printf("FAIL step %ld (after %s): stream %d %s buffer: %zu of %zu words differ, first at byte %zu: "
           "got %u, expected %u\n", step_no, last_op, lane, what, bad, words, first * 4, host[first],
           model[first]);
    return false;
}

static bool check_lane(std::vector<Lane> &lanes, int s) {
    Lane &l = lanes[s];
    if (!same("pinned", s, l.pinned, l.mpinned) || !same("pageable", s, l.pageable, l.mpageable)) return false;
    if (next_u64() % 3 == 0) {      // the host writes into its buffers again, as programs do
        size_t n = draw_len(words), at = below(words - n + 1);
        fill_random(l.mpinned, l.pinned, at, n);
    }
    return true;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SEED STEPS STREAMS MAX_BYTES\n", argv[0]);
        return 2;
    }
    rng_state = strtoull(argv[1], nullptr, 0);
    long steps = strtol(argv[2], nullptr, 0);
    int nstreams = atoi(argv[3]);
    words = strtoull(argv[4], nullptr, 0) / 4;
    std::vector<Lane> lanes(nstreams);
    for (int s = 0; s < nstreams; ++s) {
        Lane &l = lanes[s];
        CHECK(cudaStreamCreate(&l.stream));
        CHECK(cudaEventCreateWithFlags(&l.event, cudaEventDisableTiming));
        CHECK(cudaMalloc(&l.dev, words * 4));
        CHECK(cudaMallocHost(&l.pinned, words * 4));
        l.pageable = (uint32_t *)malloc(words * 4);
        l.mdev.assign(words, 0);
        l.mpinned.assign(words, 0);
        l.mpageable.assign(words, 0);
        fill_random(l.mpinned, l.pinned, 0, words);
        fill_random(l.mpageable, l.pageable, 0, words);
        CHECK(cudaMemset(l.dev, 0, words * 4));
    }
    long bytes = 0;
    for (step_no = 0; step_no < steps; ++step_no) {
        int s = (int)below(nstreams);
        Lane &l = lanes[s];
        size_t n = draw_len(words), src = below(words - n + 1), dst = below(words - n + 1);
        switch (below(13)) {
        case 0: case 1: case 2: {           // a kernel changes part of the device buffer
            size_t kn = n > (256u << 10) ? (256u << 10) : n;
            uint32_t v = (uint32_t)next_u64();
            add_words<<<(unsigned)((kn + 255) / 256), 256, 0, l.stream>>>(l.dev + dst, kn, v);
            CHECK(cudaGetLastError());
            for (size_t i = 0; i < kn; ++i) l.mdev[dst + i] += v + (uint32_t)i;
            last_op = "kernel";
            break;
        }
        case 3: case 4: case 5: case 6: // device to pinned host memory: completes by the next sync
            CHECK(cudaMemcpyAsync(l.pinned + dst, l.dev + src, n * 4, cudaMemcpyDeviceToHost, l.stream));
            memcpy(l.mpinned.data() + dst, l.mdev.data() + src, n * 4);
            last_op = "D2H async into pinned";
            break;
        case 7:                     // pinned host to device: reads the pinned bytes in stream order
            CHECK(cudaMemcpyAsync(l.dev + dst, l.pinned + src, n * 4, cudaMemcpyHostToDevice, l.stream));
            memcpy(l.mdev.data() + dst, l.mpinned.data() + src, n * 4);
            last_op = "H2D async from pinned";
            break;
        case 8:                     // device to pageable memory: complete when the call returns
            CHECK(cudaMemcpyAsync(l.pageable + dst, l.dev + src, n * 4, cudaMemcpyDeviceToHost, l.stream));
            memcpy(l.mpageable.data() + dst, l.mdev.data() + src, n * 4);
            last_op = "D2H async into pageable";
            if (!same("pageable", s, l.pageable, l.mpageable)) return 1;
            break;
        case 9:                     // pageable to device: the source may change once the call returned
            CHECK(cudaMemcpyAsync(l.dev + dst, l.pageable + src, n * 4, cudaMemcpyHostToDevice, l.stream));
            memcpy(l.mdev.data() + dst, l.mpageable.data() + src, n * 4);
            fill_random(l.mpageable, l.pageable, src, n);
            last_op = "H2D async from pageable";
            break;
        case 10: {                  // memset
            int byte = (int)below(256);
            CHECK(cudaMemsetAsync(l.dev + dst, byte, n * 4, l.stream));
            memset(l.mdev.data() + dst, byte, n * 4);
            last_op = "memset async";
            break;
        }
        default: {                  // a synchronising call
            last_op = "synchronisation";
            switch (below(6)) {
            case 0:
                CHECK(cudaStreamSynchronize(l.stream));
                if (!check_lane(lanes, s)) return 1;
                break;
            case 1:
                CHECK(cudaEventRecord(l.event, l.stream));
                CHECK(cudaEventSynchronize(l.event));
                if (!check_lane(lanes, s)) return 1;
                break;
            case 2: {
                cudaError_t e;
                while ((e = cudaStreamQuery(l.stream)) == cudaErrorNotReady) {}
                CHECK(e);
                if (!check_lane(lanes, s)) return 1;
                break;
            }
            case 3: {                   // an event that says done: the copies before it landed
                CHECK(cudaEventRecord(l.event, l.stream));
                cudaError_t e;
                while ((e = cudaEventQuery(l.event)) == cudaErrorNotReady) {}
                CHECK(e);
                if (!check_lane(lanes, s)) return 1;
                break;
            }
            default:
                CHECK(cudaDeviceSynchronize());
                for (int t = 0; t < nstreams; ++t)
                    if (!check_lane(lanes, t)) return 1;
            }
            continue;
        }
        }
        bytes += (long)n * 4;
    }
    last_op = "the final cudaDeviceSynchronize";
    CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < nstreams; ++s) {
        if (!check_lane(lanes, s)) return 1;
        std::vector<uint32_t> back(words);       // and the device buffers themselves
        CHECK(cudaMemcpy(back.data(), lanes[s].dev, words * 4, cudaMemcpyDeviceToHost));
        if (!same("device", s, back.data(), lanes[s].mdev)) return 1;
    }
    printf("PASS: %ld steps on %d stream(s), %ld checks, %ld bytes moved\n", steps, nstreams, checks, bytes);
    return 0;
}
