// A kernel with a grid-wide barrier (cooperative_groups), built to PTX by the cooperative tests.
#include <cooperative_groups.h>

extern "C" __global__ void shift_after_sync(int *data, int *out, int n)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    int i = grid.thread_rank();
    if (i < n)
        data[i] = i;
    grid.sync();
    if (i < n)
        out[i] = data[(i + 1) % n];     // written by the next thread, maybe in another block
}
