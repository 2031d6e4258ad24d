#define TU_VALUE 2
#define TU_ENTRY run_b
#include "rdc_static_tu.cuh"
