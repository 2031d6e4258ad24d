// Device malloc/free and C++ new/delete: per-thread buffers, a linked list built and freed by each
// thread, and a kernel that allocates until the heap is exhausted.
extern "C" {

struct Node {
    int value;
    Node *next;
};

__global__ void per_thread_buffers(const int *lengths, long long *sums, unsigned long long *addresses, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int len = lengths[i];
    int *buf = (int *)malloc(len * sizeof(int));
    addresses[i] = (unsigned long long)buf;
    if (buf == nullptr) {
        sums[i] = -1;
        return;
    }
    for (int k = 0; k < len; k++)
        buf[k] = i * k + 1;
    long long s = 0;
    for (int k = len - 1; k >= 0; k--)
        s += buf[k];
    sums[i] = s;
    free(buf);
}

__global__ void linked_lists(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Node *head = nullptr;
    for (int k = 0; k <= i % 9; k++) {
        Node *node = new Node;
        node->value = k * k + i;
        node->next = head;
        head = node;
    }
    int s = 0;
    while (head) {
        Node *next = head->next;
        s = 3 * s + head->value;
        delete head;
        head = next;
    }
    out[i] = s;
}

// each thread asks for `bytes` and keeps it: some get NULL once the heap is full
__global__ void exhaust(unsigned long long *addresses, unsigned long long bytes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    addresses[i] = (unsigned long long)malloc(bytes);
}

__global__ void release(unsigned long long *addresses, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        free((void *)addresses[i]);
}

}
