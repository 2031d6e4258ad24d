// bench/graphs.py: KERNELS small kernels launched one by one against the same kernels captured into
// a CUDA graph and launched as one, each round ended by cudaStreamSynchronize. Prints
// "one_by_one_us US", "graph_us US" (a round's median time) and "counted N" (what the kernels
// added up, for the check that every launch ran).
#include <cstdlib>
#include "../examples/bench_timing.h"
#include <cuda_runtime.h>

__global__ void tick(unsigned long long *counter)
{
    if (threadIdx.x == 0)
        atomicAdd(counter, 1ULL);
}

int main(int argc, char **argv)
{
    const int kernels = argc > 1 ? atoi(argv[1]) : 100;
    unsigned long long *counter, total = 0, rounds = 0;
    cudaStream_t s;
    if (cudaMalloc(&counter, sizeof *counter) || cudaMemset(counter, 0, sizeof *counter)
        || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
        return 1;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int k = 0; k < kernels; k++)
        tick<<<1, 32, 0, s>>>(counter);
    if (cudaStreamEndCapture(s, &graph) || cudaGraphInstantiate(&exec, graph, 0))
        return 1;
    auto one_by_one = [&] {
        for (int k = 0; k < kernels; k++)
            tick<<<1, 32, 0, s>>>(counter);
        cudaStreamSynchronize(s);
        rounds++;
    };
    auto as_graph = [&] {
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        rounds++;
    };
    one_by_one();                       // the module is loaded, the graph created on the server
    as_graph();
    printf("one_by_one_us %.3f\n", median_us(one_by_one, 3));
    printf("graph_us %.3f\n", median_us(as_graph, 3));
    cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost);
    printf("counted %llu of %llu\n", total, rounds * kernels);
    return cudaGetLastError() == cudaSuccess && total == rounds * kernels ? 0 : 1;
}
