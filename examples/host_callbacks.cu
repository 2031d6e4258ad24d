// Host functions in stream order: cudaLaunchHostFunc and cudaStreamAddCallback run after the
// stream's earlier work (they see its results) and before its later work (which sees what they
// wrote). Every check compares with values the program computed itself.
#include "check.h"

__global__ void add(int *x, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}

const int N = 256;
struct step {
    int *host;          // pinned buffer the stream copies into and out of
    int expect;         // what the earlier work left there
    int write;          // what the function writes for the later work
    int seen;           // what it found
    int order;          // when it ran among all calls
};
static int calls = 0;

static void CUDART_CB host_fn(void *p)
{
    step *s = (step *)p;
    s->seen = s->host[N - 1];
    for (int i = 0; i < N; i++) s->host[i] = s->write;
    s->order = ++calls;
}

static cudaError_t callback_status = cudaErrorUnknown;
static void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void *p)
{
    callback_status = status;
    host_fn(p);
}

int main()
{
    int *h, *d;
    CHECK(cudaMallocHost(&h, N * sizeof(int)));
    CHECK(cudaMalloc(&d, N * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    int bad = 0;

    // memset 0, +5 on the device, copy out; the function sees 5 and writes 100; copy in, +1, copy out.
    step a = {h, 5, 100, -1, 0}, b = {h, 101, 200, -1, 0};
    CHECK(cudaMemsetAsync(d, 0, N * sizeof(int), s));
    add<<<1, N, 0, s>>>(d, 5, N);
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, host_fn, &a));
    CHECK(cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, s));
    add<<<1, N, 0, s>>>(d, 1, N);
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamAddCallback(s, stream_callback, &b, 0));
    CHECK(cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, s));
    add<<<1, N, 0, s>>>(d, 1, N);
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    bad += report("cudaLaunchHostFunc saw the stream's earlier work", a.seen != a.expect);
    bad += report("cudaStreamAddCallback saw the work after the first function", b.seen != b.expect);
    bad += report("cudaStreamAddCallback got cudaSuccess as its status", callback_status != cudaSuccess);
    bad += report("the functions ran once each, in stream order", a.order != 1 || b.order != 2 || calls != 2);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        if (h[i] != 201) wrong++;
    bad += report("later work saw what the callbacks wrote", wrong);

    // the legacy default stream too
    step c = {h, 201, 7, -1, 0};
    CHECK(cudaLaunchHostFunc(0, host_fn, &c));
    CHECK(cudaDeviceSynchronize());
    bad += report("cudaLaunchHostFunc on the default stream", c.seen != 201 || c.order != 3 || h[0] != 7);
    bad += report("a NULL host function is cudaErrorInvalidValue",
                  cudaLaunchHostFunc(s, NULL, NULL) != cudaErrorInvalidValue);

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d)); CHECK(cudaFreeHost(h));
    return report("host functions in stream order", bad);
}
