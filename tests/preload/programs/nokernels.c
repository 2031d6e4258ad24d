/* Test program without kernels (so nothing calls CUDA from a constructor), built with
 * `nvcc -cudart shared`: the first CUDA call happens where the mode says. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t start_together;

static void *first_call(void *arg)
{
    int *ok = (int *)arg;
    pthread_barrier_wait(&start_together);
    int version = 0;
    *ok = cudaRuntimeGetVersion(&version) == cudaSuccess && version == 13000
          && strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0;
    return NULL;
}

/* N threads make the process's first CUDA call at the same moment. */
static int race_mode(int nthreads)
{
    pthread_t tids[64];
    int ok[64];
    if (nthreads > 64)
        nthreads = 64;
    pthread_barrier_init(&start_together, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&tids[t], NULL, first_call, &ok[t]);
    int good = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tids[t], NULL);
        good += ok[t];
    }
    printf("race threads %d good %d\n", nthreads, good);
    return 0;
}

static void call_after_exit(void)
{
    int version = -1;
    printf("at exit cudaRuntimeGetVersion %d\n", (int)cudaRuntimeGetVersion(&version));
    fflush(stdout);
}

/* An atexit handler registered before the first CUDA call runs after the shim finalised Python. */
static int late_exit_mode(void)
{
    atexit(call_after_exit);
    int version = -1;
    cudaError_t e = cudaRuntimeGetVersion(&version);
    printf("cudaRuntimeGetVersion %d %d\n", (int)e, version);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "race";
    if (!strcmp(mode, "race"))
        return race_mode(argc > 2 ? atoi(argv[2]) : 8);
    if (!strcmp(mode, "late-exit"))
        return late_exit_mode();
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
