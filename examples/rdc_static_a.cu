#define TU_VALUE 1
#define TU_ENTRY run_a
#include "rdc_static_tu.cuh"
