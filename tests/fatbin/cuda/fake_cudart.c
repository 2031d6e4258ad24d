/* A stand-in for libcudart.so.13 (no GPU here): records what nvcc's start-up
 * code hands to the registration ABI, so the tests can decode the wrapper
 * pointer exactly as the cricket client receives it. Nothing else works. */
#include <stddef.h>
#include <stdint.h>

#define MAX_RECORDS 64

static void *wrappers[MAX_RECORDS];
static int n_wrappers;
static const char *functions[MAX_RECORDS];
static int n_functions;

void **__cudaRegisterFatBinary(void *fatCubin)
{
    if (n_wrappers < MAX_RECORDS) wrappers[n_wrappers++] = fatCubin;
    return (void **)&wrappers[n_wrappers - 1];
}
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
char __cudaInitModule(void **h) { (void)h; return 0; }
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize)
{
    (void)h; (void)hostFun; (void)deviceFun; (void)thread_limit; (void)tid; (void)bid; (void)bDim;
    (void)gDim; (void)wSize;
    if (n_functions < MAX_RECORDS) functions[n_functions++] = deviceName;
}
void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)h; (void)hostVar; (void)deviceAddress; (void)deviceName; (void)ext; (void)size;
    (void)constant; (void)global;
}
void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)h; (void)hostVarPtrAddress; (void)deviceAddress; (void)deviceName; (void)ext; (void)size;
    (void)constant; (void)global;
}
int __cudaPushCallConfiguration(uint64_t g, uint32_t gz, uint64_t b, uint32_t bz, size_t shm, void *s)
{
    (void)g; (void)gz; (void)b; (void)bz; (void)shm; (void)s; return 801; /* not supported */
}
int __cudaPopCallConfiguration(void *g, void *b, size_t *shm, void *s)
{
    (void)g; (void)b; (void)shm; (void)s; return 801;
}
int __cudaGetKernel(void **k, const void *f) { (void)k; (void)f; return 801; }
int __cudaLaunchKernel(const void *k, uint64_t g, uint32_t gz, uint64_t b, uint32_t bz, void **a,
                       size_t shm, void *s)
{
    (void)k; (void)g; (void)gz; (void)b; (void)bz; (void)a; (void)shm; (void)s; return 801;
}

/* Read back by the test. */
int fake_wrapper_count(void) { return n_wrappers; }
void *fake_wrapper(int i) { return i < n_wrappers ? wrappers[i] : NULL; }
int fake_function_count(void) { return n_functions; }
const char *fake_function(int i) { return i < n_functions ? functions[i] : NULL; }
