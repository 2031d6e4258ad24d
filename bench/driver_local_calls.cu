// Per-call cost of the calls the libcuda.so.1 replacement answers in the process, through NVIDIA's
// static cudart and directly. Not a test: numbers for bench/calls.py's static-cudart path.
//   nvcc -O2 -o driver_local_calls bench/driver_local_calls.cu -LOUT -l:libcuda.so.1
//   LD_LIBRARY_PATH=OUT ./driver_local_calls [iterations]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define TIME(label, n, body)                                                   \
    do {                                                                       \
        double t0_ = now_ns();                                                 \
        for (long i_ = 0; i_ < (n); i_++) { body; }                            \
        printf("| %s | %.1f |\n", label, (now_ns() - t0_) / (n));            \
    } while (0)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int least, greatest, dev, value;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) {  // initialises cudart
        fprintf(stderr, "cudart did not initialise\n");
        return 1;
    }
    CUcontext ctx;
    CUuuid cls_id;
    memcpy(cls_id.bytes, "\xc6\x93\x33\x6e\x11\x21\xdf\x11\xa8\xc3\x68\xf3\x55\xd8\x95\x93", 16);
    CUuuid ic_id;
    memcpy(ic_id.bytes, "\xd4\x08\x20\x55\xbd\xe6\x70\x4b\x8d\x34\xba\x12\x3c\x66\xe1\xf2", 16);
    const void *const *cls, *const *ic;
    cuGetExportTable((const void **)&cls, &cls_id);
    cuGetExportTable((const void **)&ic, &ic_id);
    typedef CUresult (*cls_get_t)(void **, CUcontext, void *);
    typedef CUresult (*integrity_t)(unsigned, unsigned long long, unsigned long long (*)[2]);
    cls_get_t cls_get = (cls_get_t)cls[2];
    integrity_t integrity = (integrity_t)ic[1];
    void *pfn, *stored;
    unsigned long long out[2];
    printf("| call | ns/call |\n| --- | --- |\n");
    TIME("cuCtxGetCurrent", n, cuCtxGetCurrent(&ctx));
    TIME("CLS get (miss)", n, cls_get(&stored, NULL, (void *)&n));
    TIME("cuDeviceGetAttribute", n, cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    TIME("cuGetProcAddress_v2(cuMemcpyHtoD)", n, cuGetProcAddress_v2("cuMemcpyHtoD", &pfn, 13000, 0, NULL));
    TIME("INTEGRITY_CHECK[1] (computed case)", n / 100, integrity(13002, 1795976827ull, &out));
    TIME("cudaGetDevice (static cudart)", n, cudaGetDevice(&dev));
    TIME("cudaDeviceGetStreamPriorityRange (static cudart)", n, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TIME("cudaDeviceGetAttribute (static cudart)", n, cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 0));
    return 0;
}
