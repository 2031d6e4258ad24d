/* The driver's undocumented export tables ("dark API") that NVIDIA's cudart 13.x requires,
 * returned by cuGetExportTable (driver-dark-api.md §7, driver-interception.md §2).
 *
 * Every table is a static array: its address and the address in each slot stay the same for the
 * whole process, which the integrity hash (INTEGRITY_CHECK slot 1) depends on. Slot 0 holds the
 * table size in bytes, except in the context-local-storage table, which starts with a function.
 * Slots whose meaning is unknown log their first call; in the six known tables they return 0 (as
 * the measured fake driver did), in the generic tables CUDA_ERROR_NOT_SUPPORTED. UUIDs that are
 * not listed here are refused with CUDA_ERROR_NOT_FOUND (NVRTC's table da9151d3 among them, which
 * NVRTC tolerates; slots returning 0 would break nvrtcGetCUBIN). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "md2.h"

#define SLOT(f) ((const void *)(f))
#define SIZE_WORD(n) ((const void *)(uintptr_t)((n) * sizeof(void *)))

/* An unknown slot: logs its first call and returns `value`. */
static uint64_t unknown_slot(const char *table, int slot, atomic_int *seen, uint64_t value)
{
    if (atomic_exchange_explicit(seen, 1, memory_order_relaxed) == 0)
        cricket_drv_log(CRICKET_DRV_WARNING, "export table %s slot %d called; its meaning is unknown, "
                        "answering %llu", table, slot, (unsigned long long)value);
    return value;
}

#define UNKNOWN_SLOT(T, N, VALUE)                                                \
    static uint64_t T##_slot##N(void)                                            \
    {                                                                            \
        static atomic_int seen;                                                  \
        return unknown_slot(#T, N, &seen, VALUE);                                \
    }

/* ------------------------------------------------------------------ CUDART_INTERFACE */

static CUresult cudart_interface_module_from_cubin(CUmodule *module, const void *fatbinc_wrapper)
{
    static atomic_int seen;
    return cricket_drv_unimplemented("CUDART_INTERFACE[1] (module from fatbinC wrapper)", &seen);
}

static CUresult cudart_interface_primary_context(CUcontext *pctx, CUdevice dev)
{
    return cuDevicePrimaryCtxRetain(pctx, dev);
}

static CUresult cudart_interface_module_from_cubin_ext1(CUmodule *module, const void *fatbinc_wrapper,
                                                         void *arg3, void *arg4, uint32_t arg5)
{
    static atomic_int seen;
    return cricket_drv_unimplemented("CUDART_INTERFACE[6] (module from fatbinC wrapper)", &seen);
}

static void cudart_interface_slot7(size_t ignored)
{
}

static CUresult cudart_interface_module_from_cubin_ext2(const void *fatbin_header, CUmodule *module,
                                                         void *arg3, void *arg4, uint32_t arg5)
{
    static atomic_int seen;
    return cricket_drv_unimplemented("CUDART_INTERFACE[8] (module from fatbin)", &seen);
}

/* cudart 13.5: "load compilers" (PTX compiler, libnvvm); nothing to load here. */
static CUresult cudart_interface_load_compilers(void)
{
    cricket_drv_log(CRICKET_DRV_DEBUG, "CUDART_INTERFACE[12] (load compilers): nothing to load");
    return CUDA_SUCCESS;
}

UNKNOWN_SLOT(CUDART_INTERFACE, 3, 0)
UNKNOWN_SLOT(CUDART_INTERFACE, 4, 0)
UNKNOWN_SLOT(CUDART_INTERFACE, 5, 0)
UNKNOWN_SLOT(CUDART_INTERFACE, 9, 0)
UNKNOWN_SLOT(CUDART_INTERFACE, 10, 0)
UNKNOWN_SLOT(CUDART_INTERFACE, 11, 0)

static const void *const cudart_interface[13] = {
    SIZE_WORD(13),
    SLOT(cudart_interface_module_from_cubin),
    SLOT(cudart_interface_primary_context),
    SLOT(CUDART_INTERFACE_slot3),
    SLOT(CUDART_INTERFACE_slot4),
    SLOT(CUDART_INTERFACE_slot5),
    SLOT(cudart_interface_module_from_cubin_ext1),
    SLOT(cudart_interface_slot7),
    SLOT(cudart_interface_module_from_cubin_ext2),
    SLOT(CUDART_INTERFACE_slot9),
    SLOT(CUDART_INTERFACE_slot10),
    SLOT(CUDART_INTERFACE_slot11),
    SLOT(cudart_interface_load_compilers),
};

/* ------------------------------------------------------------------ TOOLS_RUNTIME_CALLBACK_HOOKS */

/* Process-wide zeroed buffers cudart's tools support writes into; slots 2 and 6 hand them out
 * with their element counts (4-byte elements). */
static uint32_t tools_buffer1[1024];
static uint32_t tools_buffer2[14];

static void tools_hooks_buffer1(void **ptr, size_t *size)
{
    *ptr = tools_buffer1;
    *size = sizeof tools_buffer1 / sizeof tools_buffer1[0];
}

static void tools_hooks_buffer2(void **ptr, size_t *size)
{
    *ptr = tools_buffer2;
    *size = sizeof tools_buffer2 / sizeof tools_buffer2[0];
}

UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 1, 0)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 3, 0)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 4, 0)
UNKNOWN_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 5, 0)

static const void *const tools_runtime_callback_hooks[7] = {
    SIZE_WORD(7),
    SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS_slot1),
    SLOT(tools_hooks_buffer1),
    SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS_slot3),
    SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS_slot4),
    SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS_slot5),
    SLOT(tools_hooks_buffer2),
};

/* ------------------------------------------------------------------ TOOLS_TLS */

UNKNOWN_SLOT(TOOLS_TLS, 1, 0)
UNKNOWN_SLOT(TOOLS_TLS, 2, 0)
UNKNOWN_SLOT(TOOLS_TLS, 3, 0)

static const void *const tools_tls[4] = {
    SIZE_WORD(4),
    SLOT(TOOLS_TLS_slot1),
    SLOT(TOOLS_TLS_slot2),
    SLOT(TOOLS_TLS_slot3),
};

/* ------------------------------------------------------------------ CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 */

UNKNOWN_SLOT(CONTEXT_LOCAL_STORAGE, 3, 0)

/* No size word: slot 0 is the first function. */
static const void *const context_local_storage[4] = {
    SLOT(cricket_drv_cls_put),
    SLOT(cricket_drv_cls_delete),
    SLOT(cricket_drv_cls_get),
    SLOT(CONTEXT_LOCAL_STORAGE_slot3),
};

/* ------------------------------------------------------------------ CONTEXT_CHECKS */

static CUresult context_checks_check(CUcontext ctx, uint32_t *result1, void **result2)
{
    if (result1)
        *result1 = 0;
    return CUDA_SUCCESS;
}

static CUresult context_checks_slot3(void)
{
    return CUDA_SUCCESS;
}

UNKNOWN_SLOT(CONTEXT_CHECKS, 1, 0)

static const void *const context_checks[4] = {
    SIZE_WORD(4),
    SLOT(CONTEXT_CHECKS_slot1),
    SLOT(context_checks_check),
    SLOT(context_checks_slot3),
};

/* ------------------------------------------------------------------ INTEGRITY_CHECK */

static CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t (*result)[2]);

static CUresult integrity_set_enabled(int enabled)
{
    return CUDA_SUCCESS;
}

static const void *const integrity_table[3] = {
    SIZE_WORD(3),
    SLOT(integrity_check),
    SLOT(integrity_set_enabled),
};

/* cudart recomputes this answer itself, from the values this library reported earlier, and
 * refuses to run (cudaErrorSoftwareValidityNotEstablished, 103) when they differ. Test knob:
 * CRICKET_DRIVER_CORRUPT_INTEGRITY=1 flips one bit of the answer. */
static CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t (*result)[2])
{
    if (!result)
        return CUDA_ERROR_INVALID_VALUE;
    const struct cricket_drv_snapshot *s = cricket_drv_snapshot();
    struct cricket_integrity_device devices[CRICKET_DRV_MAX_DEVICES];
    for (int i = 0; i < s->device_count; i++) {
        const struct cricket_drv_device *d = &s->devices[i];
        memcpy(devices[i].uuid, d->uuid.bytes, 16);
        devices[i].pci_domain = d->attributes[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
        devices[i].pci_bus = d->attributes[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
        devices[i].pci_device = d->attributes[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
    }
    struct cricket_integrity_inputs in = {
        .driver_version = (uint32_t)s->driver_version,
        .version = version,
        .pid = (uint32_t)getpid(),
        .thread = (uint32_t)(uintptr_t)pthread_self(),
        .cudart_interface_table = (uint64_t)(uintptr_t)cudart_interface,
        .integrity_table = (uint64_t)(uintptr_t)integrity_table,
        .integrity_slot1 = (uint64_t)(uintptr_t)integrity_table[1],
        .unix_seconds = unix_seconds,
        .devices = devices,
        .device_count = (size_t)s->device_count,
    };
    uint8_t bytes[16];
    cricket_integrity_hash(&in, bytes, NULL);
    const char *corrupt = getenv("CRICKET_DRIVER_CORRUPT_INTEGRITY");
    if (corrupt && *corrupt && strcmp(corrupt, "0") != 0) {
        cricket_drv_log(CRICKET_DRV_WARNING, "CRICKET_DRIVER_CORRUPT_INTEGRITY is set: answering a wrong integrity hash");
        bytes[0] ^= 1;
    }
    memcpy(result, bytes, sizeof bytes);    /* little-endian u64 pair, byte for byte */
    cricket_drv_log(CRICKET_DRV_DEBUG, "integrity check version %u", version);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ generic tables */

/* Tables whose slots are unknown, but which cudart needs to exist: f8cff951 (requested first by
 * every cudart 13.x; refusing it is harmless) and 21318c60 (cudart 13.5; refusing it crashes
 * cudart). 64 slots, size word first, NOT_SUPPORTED but for 21318c60 slot 4 (below). */
#define GENERIC_SLOTS(M, T) M(T, 1) M(T, 2) M(T, 3) M(T, 4) GENERIC_SLOTS_FROM_5(M, T)
#define GENERIC_SLOTS_FROM_5(M, T) \
    M(T, 5) M(T, 6) M(T, 7) M(T, 8) \
    M(T, 9) M(T, 10) M(T, 11) M(T, 12) M(T, 13) M(T, 14) M(T, 15) M(T, 16) \
    M(T, 17) M(T, 18) M(T, 19) M(T, 20) M(T, 21) M(T, 22) M(T, 23) M(T, 24) \
    M(T, 25) M(T, 26) M(T, 27) M(T, 28) M(T, 29) M(T, 30) M(T, 31) M(T, 32) \
    M(T, 33) M(T, 34) M(T, 35) M(T, 36) M(T, 37) M(T, 38) M(T, 39) M(T, 40) \
    M(T, 41) M(T, 42) M(T, 43) M(T, 44) M(T, 45) M(T, 46) M(T, 47) M(T, 48) \
    M(T, 49) M(T, 50) M(T, 51) M(T, 52) M(T, 53) M(T, 54) M(T, 55) M(T, 56) \
    M(T, 57) M(T, 58) M(T, 59) M(T, 60) M(T, 61) M(T, 62) M(T, 63)
#define DEFINE_GENERIC(T, N) UNKNOWN_SLOT(T, N, CUDA_ERROR_NOT_SUPPORTED)
#define LIST_GENERIC(T, N) SLOT(T##_slot##N),

GENERIC_SLOTS(DEFINE_GENERIC, TABLE_F8CFF951)
DEFINE_GENERIC(TABLE_21318C60, 1) DEFINE_GENERIC(TABLE_21318C60, 2) DEFINE_GENERIC(TABLE_21318C60, 3)
GENERIC_SLOTS_FROM_5(DEFINE_GENERIC, TABLE_21318C60)

/* 21318c60 slot 4: cuBLAS 13.1's handle creation (cublasCreate, after TOOLS_TLS slot 2) calls it
 * with (0, a pointer into its stack frame, ...) and gives up with CUBLAS_STATUS_NOT_SUPPORTED
 * unless it succeeds; answering success and writing nothing lets cuBLAS go on to load its
 * kernels (measured with torch 2.14.1's cuBLAS 13.1.1.3). */
static uint64_t table_21318c60_slot4(void)
{
    static atomic_int seen;
    if (atomic_exchange_explicit(&seen, 1, memory_order_relaxed) == 0)
        cricket_drv_log(CRICKET_DRV_INFO, "export table 21318c60 slot 4 called (cuBLAS handle creation); answering success");
    return CUDA_SUCCESS;
}

static const void *const table_f8cff951[64] = { SIZE_WORD(64), GENERIC_SLOTS(LIST_GENERIC, TABLE_F8CFF951) };
static const void *const table_21318c60[64] = {
    SIZE_WORD(64), LIST_GENERIC(TABLE_21318C60, 1) LIST_GENERIC(TABLE_21318C60, 2) LIST_GENERIC(TABLE_21318C60, 3)
    SLOT(table_21318c60_slot4), GENERIC_SLOTS_FROM_5(LIST_GENERIC, TABLE_21318C60)
};

/* ------------------------------------------------------------------ cuGetExportTable */

static const struct {
    unsigned char uuid[16];
    const char *name;
    const void *const *table;
} EXPORT_TABLES[] = {
    { { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 },
      "CUDART_INTERFACE", cudart_interface },
    { { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 },
      "TOOLS_RUNTIME_CALLBACK_HOOKS", tools_runtime_callback_hooks },
    { { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc },
      "TOOLS_TLS", tools_tls },
    { { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 },
      "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301", context_local_storage },
    { { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e },
      "CONTEXT_CHECKS", context_checks },
    { { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 },
      "INTEGRITY_CHECK", integrity_table },
    { { 0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9 },
      "f8cff951 (generic, 64 slots)", table_f8cff951 },
    { { 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 },
      "21318c60 (generic, 64 slots; cudart 13.5)", table_21318c60 },
};

static void format_uuid(const CUuuid *id, char out[37])
{
    static const char hex[] = "0123456789abcdef";
    int k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        out[k++] = hex[(unsigned char)id->bytes[i] >> 4];
        out[k++] = hex[(unsigned char)id->bytes[i] & 15];
    }
    out[k] = 0;
}

const void *cricket_drv_export_table(const CUuuid *id)
{
    for (size_t i = 0; i < sizeof EXPORT_TABLES / sizeof EXPORT_TABLES[0]; i++)
        if (!memcmp(EXPORT_TABLES[i].uuid, id->bytes, 16)) {
            if (cricket_drv_log_enabled(CRICKET_DRV_DEBUG))
                cricket_drv_log(CRICKET_DRV_DEBUG, "cuGetExportTable %s -> %p", EXPORT_TABLES[i].name,
                                (const void *)EXPORT_TABLES[i].table);
            return EXPORT_TABLES[i].table;
        }
    return NULL;
}

CRICKET_DRV_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (!ppExportTable || !pExportTableId)
        return CUDA_ERROR_INVALID_VALUE;
    const void *table = cricket_drv_export_table(pExportTableId);
    *ppExportTable = table;
    if (!table) {
        char text[37];
        format_uuid(pExportTableId, text);
        cricket_drv_log(CRICKET_DRV_INFO, "cuGetExportTable {%s}: unknown table, refused", text);
        return CUDA_ERROR_NOT_FOUND;
    }
    return CUDA_SUCCESS;
}
