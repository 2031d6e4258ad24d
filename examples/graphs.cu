// CUDA graphs: stream capture across two streams joined by events, an explicit graph (kernel,
// memset, memcpy, host, empty, event and child-graph nodes), exec update, clone, and the capture
// errors a program may meet. Every result is checked against values computed on the host.
#include <cstring>
#include <thread>
#include "check.h"

__global__ void axpb(float *x, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}

__global__ void add(float *dst, const float *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] += src[i];
}

static int host_calls = 0;
static void CUDART_CB count_call(void *data) { host_calls += *(int *)data; }

static int check(const float *h, int n, float (*expect)(int), const char *what)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != expect(i)) bad++;
    return report(what, bad);
}

const int N = 1000;
static float captured(int i) { return 2.0f * (3.0f * i + 1.0f) + 5.0f; }      // both halves, then joined
static float explicit_graph(int i) { return (float)(7 * 2 + 1) + 4.0f; }       // memset 7s, axpb, add child
static float updated(int i) { return (float)(7 * 3 + 2) + 4.0f; }

int main()
{
    const int threads = 128, blocks = (N + threads - 1) / threads;
    float *h, *d, *e;
    CHECK(cudaMallocHost(&h, N * sizeof(float)));
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    CHECK(cudaMalloc(&e, N * sizeof(float)));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreate(&fork)); CHECK(cudaEventCreate(&join));
    int bad = 0;

    // 1. capture: s1 copies in and forks to s2; each scales one half; s2 joins back; s1 copies out.
    for (int i = 0; i < N; i++) h[i] = i;
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s1, &status));
    bad += report("s1 is capturing", status != cudaStreamCaptureStatusActive);
    CHECK(cudaMemcpyAsync(d, h, N * sizeof(float), cudaMemcpyHostToDevice, s1));
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    CHECK(cudaStreamIsCapturing(s2, &status));
    bad += report("s2 joined the capture through the event", status != cudaStreamCaptureStatusActive);
    axpb<<<blocks / 2, threads, 0, s1>>>(d, 3.0f, 1.0f, N / 2);
    axpb<<<blocks / 2 + 1, threads, 0, s2>>>(d + N / 2, 3.0f, 1.0f, N - N / 2);
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    axpb<<<blocks, threads, 0, s1>>>(d, 2.0f, 5.0f, N);
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(float), cudaMemcpyDeviceToHost, s1));
    unsigned long long id = 0;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(s1, &status, &id, NULL, NULL, NULL, &ndeps));
    bad += report("capture info: active, an id, one dependency", status != cudaStreamCaptureStatusActive
                  || id == 0 || ndeps != 1);
    for (int i = 0; i < N; i++) h[i] = -1;                 // nothing ran yet: captured, not sent
    CHECK(cudaStreamEndCapture(s1, &graph));
    CHECK(cudaStreamIsCapturing(s2, &status));
    bad += report("capture ended for both streams", status != cudaStreamCaptureStatusNone);
    bad += report("captured work did not run", h[5] != -1);
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    bad += report("captured graph has 5 nodes", nodes != 5);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < 2; round++) {              // the host memory is read at each launch
        for (int i = 0; i < N; i++) h[i] = i;
        CHECK(cudaGraphLaunch(exec, s1));
        CHECK(cudaStreamSynchronize(s1));
        bad += check(h, N, captured, round ? "captured graph, launched again" : "captured graph launch");
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));

    // 2. explicit: memset(7) -> axpb(2, 1) -> child graph adding e (4s) -> copy to host -> host node
    cudaGraph_t g, child, g2;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t nset, nk, nchild, ncopy, nhost, nempty, nrec;
    cudaMemsetParams ms = {};
    ms.dst = d; ms.value = 0; ms.elementSize = 4; ms.width = N; ms.height = 1;
    float seven = 7.0f;
    memcpy(&ms.value, &seven, 4);
    CHECK(cudaGraphAddMemsetNode(&nset, g, NULL, 0, &ms));
    float a = 2.0f, b = 1.0f;
    int n = N;
    void *args[] = {&d, &a, &b, &n};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)axpb; kp.gridDim = dim3(blocks); kp.blockDim = dim3(threads);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&nk, g, &nset, 1, &kp));
    cudaGraphNode_t cset, cadd;
    cudaMemsetParams cms = ms;
    float four = 4.0f;
    cms.dst = e;
    memcpy(&cms.value, &four, 4);
    CHECK(cudaGraphAddMemsetNode(&cset, child, NULL, 0, &cms));
    void *add_args[] = {&d, &e, &n};
    cudaKernelNodeParams ap = kp;
    ap.func = (void *)add; ap.kernelParams = add_args;
    CHECK(cudaGraphAddKernelNode(&cadd, child, &cset, 1, &ap));
    CHECK(cudaGraphAddChildGraphNode(&nchild, g, &nk, 1, child));
    CHECK(cudaGraphAddEmptyNode(&nempty, g, &nchild, 1));
    CHECK(cudaGraphAddEventRecordNode(&nrec, g, &nempty, 1, join));
    CHECK(cudaGraphAddMemcpyNode1D(&ncopy, g, &nrec, 1, h, d, N * sizeof(float), cudaMemcpyDeviceToHost));
    int one = 1;
    cudaHostNodeParams hp = {count_call, &one};
    CHECK(cudaGraphAddHostNode(&nhost, g, &ncopy, 1, &hp));
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(nchild, &type));
    bad += report("child node type", type != cudaGraphNodeTypeGraph);
    CHECK(cudaGraphClone(&g2, g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    bad += check(h, N, explicit_graph, "explicit graph: memset, kernel, child graph, copy");
    bad += report("host node ran once", host_calls != 1);
    CHECK(cudaEventSynchronize(join));

    // 3. update: the same kernel node with new arguments, in the exec alone ...
    a = 3.0f; b = 2.0f;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, nk, &kp));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    bad += check(h, N, updated, "cudaGraphExecKernelNodeSetParams");
    // ... from a graph of the same shape (the clone, changed), and from one of another shape
    a = 2.0f; b = 1.0f;
    size_t count = 16;
    cudaGraphNode_t cloned[16];
    CHECK(cudaGraphGetNodes(g2, cloned, &count));
    kp.kernelParams = args;
    CHECK(cudaGraphKernelNodeSetParams(cloned[1], &kp));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, g2, &info));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    bad += check(h, N, explicit_graph, "cudaGraphExecUpdate with the same topology");
    cudaGraphNode_t extra;
    CHECK(cudaGraphAddEmptyNode(&extra, g2, NULL, 0));
    cudaError_t err = cudaGraphExecUpdate(exec, g2, &info);
    bad += report("update with another topology: cudaErrorGraphExecUpdateFailure, TopologyChanged",
                  err != cudaErrorGraphExecUpdateFailure || info.result != cudaGraphExecUpdateErrorTopologyChanged);
    bad += report("host node ran at each launch", host_calls != 3);

    // 4. capture errors
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    float *tmp;
    err = cudaMalloc(&tmp, 16);
    bad += report("cudaMalloc during a global capture: cudaErrorStreamCaptureUnsupported",
                  err != cudaErrorStreamCaptureUnsupported);
    err = cudaStreamEndCapture(s1, &graph);
    bad += report("the capture was invalidated", err != cudaErrorStreamCaptureInvalidated || graph != NULL);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    err = cudaMalloc(&tmp, 16);
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    bad += report("cudaMalloc in relaxed mode during a capture succeeds", err != cudaSuccess
                  || mode != cudaStreamCaptureModeRelaxed);
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    axpb<<<1, 1, 0, s2>>>(d, 1.0f, 0.0f, 1);
    err = cudaStreamEndCapture(s1, &graph);
    bad += report("unjoined stream: cudaErrorStreamCaptureUnjoined", err != cudaErrorStreamCaptureUnjoined);
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    err = cudaStreamQuery(s1);
    cudaError_t ended = cudaStreamEndCapture(s1, &graph);
    bad += report("cudaStreamQuery on a capturing stream: unsupported, the capture invalidated",
                  err != cudaErrorStreamCaptureUnsupported || ended != cudaErrorStreamCaptureInvalidated);
    cudaError_t other = cudaSuccess;
    auto allocate = [&other] {
        float *p;
        other = cudaMalloc(&p, 16);
        if (other == cudaSuccess)
            cudaFree(p);
    };
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    std::thread(allocate).join();
    ended = cudaStreamEndCapture(s1, &graph);
    bad += report("another thread's cudaMalloc during a global capture: unsupported, the capture invalidated",
                  other != cudaErrorStreamCaptureUnsupported || ended != cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    std::thread(allocate).join();
    axpb<<<1, 1, 0, s1>>>(d, 1.0f, 0.0f, 1);
    ended = cudaStreamEndCapture(s1, &graph);
    bad += report("a thread-local capture lets other threads allocate", other != cudaSuccess || ended != cudaSuccess);
    if (ended == cudaSuccess)
        CHECK(cudaGraphDestroy(graph));
    err = cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal);
    bad += report("the legacy stream cannot be captured", err != cudaErrorStreamCaptureUnsupported);
    (void)cudaGetLastError();
    // Work on the legacy stream would synchronise with a capturing blocking stream: refused, and
    // the capture invalidated; a non-blocking stream's capture is not concerned.
    cudaStream_t blocking, quiet;
    CHECK(cudaStreamCreate(&blocking));
    CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed));
    axpb<<<1, 1>>>(d, 1.0f, 0.0f, 1);
    err = cudaGetLastError();
    ended = cudaStreamEndCapture(blocking, &graph);
    bad += report("legacy-stream work during a blocking stream's capture: cudaErrorStreamCaptureImplicit, "
                  "the capture invalidated",
                  err != cudaErrorStreamCaptureImplicit || ended != cudaErrorStreamCaptureInvalidated);
    (void)cudaGetLastError();
    CHECK(cudaStreamDestroy(blocking));
    CHECK(cudaStreamCreateWithFlags(&quiet, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(quiet, cudaStreamCaptureModeRelaxed));
    axpb<<<1, 1>>>(d, 1.0f, 0.0f, 1);
    err = cudaGetLastError();
    axpb<<<1, 1, 0, quiet>>>(d, 1.0f, 0.0f, 1);
    ended = cudaStreamEndCapture(quiet, &graph);
    bad += report("legacy-stream work during a non-blocking stream's capture runs",
                  err != cudaSuccess || ended != cudaSuccess);
    if (ended == cudaSuccess)
        CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(quiet));

    CHECK(cudaFree(tmp));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g)); CHECK(cudaGraphDestroy(g2)); CHECK(cudaGraphDestroy(child));
    CHECK(cudaEventDestroy(fork)); CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(s1)); CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(d)); CHECK(cudaFree(e)); CHECK(cudaFreeHost(h));
    return report("CUDA graphs", bad);
}
