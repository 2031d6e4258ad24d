"""CUlimit (cuda.h; cudaLimit uses the same numbers) and the defaults a fresh context has."""

STACK_SIZE = 0x00
PRINTF_FIFO_SIZE = 0x01
MALLOC_HEAP_SIZE = 0x02

# bytes: 1 KiB of stack per thread, a 1 MiB printf FIFO, an 8 MiB device malloc heap
DEFAULTS = {STACK_SIZE: 1024, PRINTF_FIFO_SIZE: 1 << 20, MALLOC_HEAP_SIZE: 8 << 20}
