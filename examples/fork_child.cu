// CUDA work before and after fork(): the child opens its own session and works on its own memory.
#include "check.h"
#include <sys/wait.h>
#include <unistd.h>

__global__ void add(int *x, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}

static int run(int v)
{
    const int n = 128;
    int h[n], *d;
    for (int i = 0; i < n; i++) h[i] = i;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    add<<<1, n>>>(d, v, n);
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    int bad = 0;
    for (int i = 0; i < n; i++) if (h[i] != i + v) bad++;
    return bad;
}

int main()
{
    int bad = run(1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(run(2) ? 1 : 0);
    bad += run(3);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("child failed (status %d)\n", status);
        bad++;
    }
    return report("CUDA calls before fork, in the child and in the parent after it", bad);
}
