// CUDA IPC between two processes: the parent exports device memory and an event, the child (forked
// before either process touched CUDA, as CUDA requires) opens them, waits on the event for the
// parent's kernel, reads and changes the memory, and the parent sees the change. Then the errors
// the runtime API gives: a handle of a freed pointer, a handle opened in its own process, a
// handle whose memory the exporter freed.
#include <cstdint>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

__global__ void iota(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = i;
}

__global__ void twice(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= 2;
}

static const int n = 100000;

struct Handles {
    cudaIpcMemHandle_t memory;
    cudaIpcEventHandle_t event;
};

static void send_all(int fd, const void *p, size_t len)
{
    if (write(fd, p, len) != (ssize_t)len) {
        printf("FAIL: pipe write\n");
        exit(1);
    }
}

static void receive_all(int fd, void *p, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)p + got, len - got);
        if (r <= 0) {
            printf("FAIL: pipe read\n");
            exit(1);
        }
        got += r;
    }
}

static int child(int from_parent, int to_parent)
{
    int bad = 0;
    Handles h;
    receive_all(from_parent, &h, sizeof h);
    cudaEvent_t ready;
    CHECK(cudaIpcOpenEventHandle(&ready, h.event));
    int *v = nullptr, *again = nullptr;
    CHECK(cudaIpcOpenMemHandle((void **)&v, h.memory, cudaIpcMemLazyEnablePeerAccess));
    CHECK(cudaIpcOpenMemHandle((void **)&again, h.memory, cudaIpcMemLazyEnablePeerAccess));
    bad |= report("child: a handle opened twice gives the same pointer", v != again);
    CHECK(cudaStreamWaitEvent(0, ready, 0));      // later work of this process waits for the parent's
    CHECK(cudaEventSynchronize(ready));
    int *host = new int[n];
    CHECK(cudaMemcpy(host, v, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != i;
    bad |= report("child: sees what the parent's kernel wrote, after waiting on its IPC event", wrong != 0);
    twice<<<(n + 255) / 256, 256>>>(v, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaIpcCloseMemHandle(again));
    CHECK(cudaIpcCloseMemHandle(v));
    bad |= expect_status(cudaIpcCloseMemHandle(v), cudaErrorInvalidValue,
                        "child: closing it once more is cudaErrorInvalidValue");
    send_all(to_parent, &bad, sizeof bad);

    // the parent freed the memory: its handle opens no more
    char freed;
    receive_all(from_parent, &freed, 1);
    bad |= expect_status(cudaIpcOpenMemHandle((void **)&v, h.memory, cudaIpcMemLazyEnablePeerAccess),
                        cudaErrorInvalidResourceHandle,
                        "child: the handle of memory its exporter freed is cudaErrorInvalidResourceHandle");
    delete[] host;
    return bad;
}

int main()
{
    int down[2], up[2];
    if (pipe(down) || pipe(up)) {
        printf("FAIL: pipe\n");
        return 1;
    }
    pid_t pid = fork();                // before any CUDA call: each process is a client of its own
    if (pid == 0) {
        int failed = child(down[0], up[1]);
        fflush(stdout);
        _exit(failed ? 1 : 0);
    }

    int bad = 0;
    int *v = nullptr;
    CHECK(cudaMalloc((void **)&v, n * sizeof(int)));
    cudaEvent_t ready;
    CHECK(cudaEventCreateWithFlags(&ready, cudaEventInterprocess | cudaEventDisableTiming));
    Handles h;
    CHECK(cudaIpcGetMemHandle(&h.memory, v));
    CHECK(cudaIpcGetEventHandle(&h.event, ready));
    iota<<<(n + 255) / 256, 256>>>(v, n);
    CHECK(cudaEventRecord(ready, 0));
    send_all(down[1], &h, sizeof h);

    int child_bad = 1;
    receive_all(up[0], &child_bad, sizeof child_bad);
    int *host = new int[n];
    CHECK(cudaMemcpy(host, v, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != 2 * i;
    bad |= report("parent: sees what the child's kernel wrote through the handle", wrong != 0);

    int *mine = nullptr;
    bad |= expect_status(cudaIpcOpenMemHandle((void **)&mine, h.memory, cudaIpcMemLazyEnablePeerAccess),
                        cudaErrorDeviceUninitialized,
                        "parent: opening its own handle is cudaErrorDeviceUninitialized");
    int *gone = nullptr;
    cudaIpcMemHandle_t stale;
    CHECK(cudaMalloc((void **)&gone, 4096));
    CHECK(cudaFree(gone));
    bad |= expect_status(cudaIpcGetMemHandle(&stale, gone), cudaErrorInvalidValue,
                        "parent: the handle of a freed pointer is cudaErrorInvalidValue");

    CHECK(cudaFree(v));
    send_all(down[1], "f", 1);
    int status = 0;
    waitpid(pid, &status, 0);
    bad |= report("child process passed", child_bad || !WIFEXITED(status) || WEXITSTATUS(status) != 0);
    CHECK(cudaEventDestroy(ready));
    delete[] host;
    return report("IPC between two processes", bad);
}
