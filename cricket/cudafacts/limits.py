"""CUlimit (cuda.h; cudaLimit uses the same numbers) and the defaults a fresh context has."""

STACK_SIZE = 0x00
PRINTF_FIFO_SIZE = 0x01
MALLOC_HEAP_SIZE = 0x02
CIG_ENABLED = 0x08         # query only: non-zero in a CUDA-in-graphics context

# bytes: 1 KiB of stack per thread, a 1 MiB printf FIFO, an 8 MiB device malloc heap
DEFAULTS = {STACK_SIZE: 1024, PRINTF_FIFO_SIZE: 1 << 20, MALLOC_HEAP_SIZE: 8 << 20}

# Limits a program may query but not set, with their value in every context cricket makes.
READ_ONLY = {CIG_ENABLED: 0}
