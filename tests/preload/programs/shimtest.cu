// Test program for the libcudart shim, built with `nvcc -cudart shared`. One binary, several modes
// (argv[1]), so that the test session compiles it once. Prints what it got; exit 0 when it ran.
#include <cuda_runtime.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__device__ int device_counter;
__constant__ float constant_table[4];

// cudaDestroyExternalMemory is not implemented by the shim: it must answer 801.
static int errors_mode(int argc, char **argv)
{
    cudaError_t e = cudaDestroyExternalMemory(NULL);
    printf("cudaDestroyExternalMemory %d\n", (int)e);
    int version = -1;
    e = cudaRuntimeGetVersion(&version);
    printf("cudaRuntimeGetVersion %d %d\n", (int)e, version);
    for (int i = 2; i < argc; i++) {
        cudaError_t code = (cudaError_t)atoi(argv[i]);
        printf("code %d|%s|%s\n", (int)code, cudaGetErrorName(code), cudaGetErrorString(code));
    }
    return 0;
}

struct thread_result { int ok; int calls; };

static void *thread_body(void *arg)
{
    struct thread_result *r = (struct thread_result *)arg;
    for (int i = 0; i < r->calls; i++) {
        int version = 0;
        if (cudaRuntimeGetVersion(&version) == cudaSuccess && version == 13000
            && strcmp(cudaGetErrorString(cudaErrorNotSupported), "operation not supported") == 0
            && cudaDestroyExternalMemory(NULL) == cudaErrorNotSupported)
            r->ok++;
    }
    return NULL;
}

// N native threads make their first CUDA calls at the same time (the client starts under them).
static int threads_mode(int nthreads, int calls)
{
    pthread_t tids[64];
    struct thread_result results[64];
    if (nthreads > 64)
        nthreads = 64;
    for (int t = 0; t < nthreads; t++) {
        results[t].ok = 0;
        results[t].calls = calls;
        pthread_create(&tids[t], NULL, thread_body, &results[t]);
    }
    int ok = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tids[t], NULL);
        ok += results[t].ok;
    }
    printf("threads %d calls %d ok %d\n", nthreads, nthreads * calls, ok);
    return 0;
}

static volatile int stop_looping;

static void *looping_thread(void *arg)
{
    while (!stop_looping) {
        int version;
        cudaRuntimeGetVersion(&version);
    }
    return NULL;
}

// A thread keeps calling CUDA while the main thread forks; each child calls CUDA and exits.
static int fork_mode(int children)
{
    int version = 0;
    cudaRuntimeGetVersion(&version);           // start the client before forking
    pthread_t looper;
    pthread_create(&looper, NULL, looping_thread, NULL);
    int good = 0;
    for (int c = 0; c < children; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);                           // a hang ends as SIGALRM, not as a stuck test
            int v = 0;
            int ok = cudaRuntimeGetVersion(&v) == cudaSuccess && v == 13000
                     && strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0;
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            good++;
        else
            printf("child %d status %#x\n", c, status);
    }
    stop_looping = 1;
    pthread_join(looper, NULL);
    printf("fork children %d good %d\n", children, good);
    return 0;
}

// The client is running; then wait for a signal (SIGINT must end the program as it would without us).
static int wait_signal_mode(void)
{
    int version = -1;
    cudaRuntimeGetVersion(&version);
    printf("ready %d\n", version);
    fflush(stdout);
    for (int i = 0; i < 300; i++)
        sleep(1);
    printf("no signal arrived\n");
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "errors";
    if (!strcmp(mode, "errors"))
        return errors_mode(argc, argv);
    if (!strcmp(mode, "threads"))
        return threads_mode(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 100);
    if (!strcmp(mode, "fork"))
        return fork_mode(argc > 2 ? atoi(argv[2]) : 20);
    if (!strcmp(mode, "wait-signal"))
        return wait_signal_mode();
    if (!strcmp(mode, "launch")) {               // a kernel launch, to show it is refused, not faked
        scale<<<1, 32>>>(NULL, 2.0f, 32);
        cudaError_t e = cudaGetLastError();
        printf("launch last error %d\n", (int)e);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
