// Real calls in the emulator: recursion (direct, mutual, with divergent depths) and calls through
// function pointers (a table in device memory, a pointer passed as an argument).
extern "C" {

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ int ackermann(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

__device__ bool is_odd(unsigned n);
__device__ bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
__device__ bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }

// a walk of the implicit binary tree 0..size-1 with a local array in each frame
__device__ long long walk(const int *values, int size, int node, int depth)
{
    if (node >= size)
        return depth;
    int seen[3];
    for (int k = 0; k < 3; k++)
        seen[k] = values[(node + k) % size] * (k + 1);
    long long left = walk(values, size, 2 * node + 1, depth + 1);
    long long right = walk(values, size, 2 * node + 2, depth + 1);
    return seen[node % 3] + 2 * left - right;
}

__global__ void recursion(const int *values, int size, int *fibs, int *acks, int *parity, long long *walks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fibs[i] = fib(i % 15);
    acks[i] = ackermann(i % 3, i % 4);
    parity[i] = is_even(i % 23) ? 2 : 1;
    walks[i] = walk(values, size, i % size, 0);
}

// each call hands a pointer into its own frame to the next one, which writes through it
__device__ void fill(int *slot, int depth)
{
    int mine[2];
    mine[0] = depth;
    mine[1] = 0;
    if (depth > 0)
        fill(&mine[1], depth - 1);
    *slot = mine[0] * 10 + mine[1];
}

__global__ void frames(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        fill(&out[i], i % 12);
}

typedef float (*unary_fn)(float);
__device__ float twice(float x) { return 2.0f * x; }
__device__ float square(float x) { return x * x; }
__device__ float negate(float x) { return -x; }
__device__ float add_one(float x) { return x + 1.0f; }
__device__ unary_fn table[4] = {twice, square, negate, add_one};

__device__ __noinline__ float apply_n(unary_fn f, float x, int times)
{
    for (int k = 0; k < times; k++)
        x = f(x);
    return x;
}

__global__ void dispatch(const float *x, float *out, float *repeated, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = table[i % 4](x[i]);
    repeated[i] = apply_n(table[(i / 3) % 4], x[i], i % 3 + 1);
}

}

// virtual functions: objects made on the device with new, called through their vtables
struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    float s;
    __device__ Square(float s) : s(s) {}
    __device__ float area() const override { return s * s; }
};
struct Triangle : Shape {
    float b, h;
    __device__ Triangle(float b, float h) : b(b), h(h) {}
    __device__ float area() const override { return 0.5f * b * h; }
};

extern "C" __global__ void areas(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Shape *s = i % 3 ? (Shape *)new Square(x[i]) : (Shape *)new Triangle(x[i], 2.0f);
    out[i] = s->area();
    delete s;
}
