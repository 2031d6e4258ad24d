// Asynchronous device-to-host copies whose replies wait unread while large host-to-device copies
// go out on the same stream, before one synchronisation: the pattern of double-buffered pipelines.
// Over a socket the server stops reading while its replies pile up; the client must keep reading
// them while it sends, or both wait for each other.
#include <cstdio>
#include <cstring>

int main() {
    const size_t n = 24u << 20;
    unsigned char *back, *out, *a, *b;
    if (cudaMallocHost(&back, n) || cudaMallocHost(&out, n) || cudaMalloc(&a, n) || cudaMalloc(&b, n)) {
        printf("FAIL: allocation\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(i * 7 + 1);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemsetAsync(a, 0x5a, n, s);
    for (int round = 0; round < 3; round++) {
        cudaMemcpyAsync(back, a, n, cudaMemcpyDeviceToHost, s);
        cudaMemcpyAsync(b, out, n, cudaMemcpyHostToDevice, s);
    }
    cudaError_t err = cudaStreamSynchronize(s);
    int bad = err != cudaSuccess;
    for (size_t i = 0; i < n && !bad; i++) bad = back[i] != 0x5a;
    memset(back, 0, n);
    if (!bad) bad = cudaMemcpy(back, b, n, cudaMemcpyDeviceToHost) != cudaSuccess;
    for (size_t i = 0; i < n && !bad; i++) bad = back[i] != (unsigned char)(i * 7 + 1);
    printf("%s: %zu MiB each way, three rounds before one synchronisation (%s)\n", bad ? "FAIL" : "PASS",
           n >> 20, cudaGetErrorName(err));
    return bad;
}
