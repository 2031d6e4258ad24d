/* The device snapshot the driver answers from, without a round trip: driver version, device count,
 * names, UUIDs, memory sizes and every attribute.
 *
 * Until the server's HELLO snapshot is wired in, it comes from one of:
 *   - CRICKET_DRIVER_DEVICES=FILE: a text description (format below), each device starting from
 *     the built-in values;
 *   - otherwise the BUILT-IN EMULATED DEVICE: one sm_75 device with Tesla-T4-like limits, named
 *     "cricket emulated sm_75", which is what the `emu` backend executes PTX for. It is not a real
 *     GPU and says so in its name.
 * The snapshot is loaded once and never changes: cudart hashes UUID and PCI ids into the
 * integrity check and caches the attributes.
 *
 * File format, one item per line, '#' starts a comment:
 *   driver_version 13000
 *   device                       # starts the next device (built-in values)
 *   name Some GPU
 *   uuid 000102030405060708090a0b0c0d0e0f
 *   total_mem 16106127360
 *   attr 33 5                    # CU_DEVICE_ATTRIBUTE number and value
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "driver.h"

#define BUILTIN_NAME "cricket emulated sm_75"
#define BUILTIN_DRIVER_VERSION 13000

static struct cricket_drv_snapshot snapshot;
static pthread_once_t snapshot_once = PTHREAD_ONCE_INIT;
static atomic_int initialised;

/* Attribute values of the built-in device (a Turing sm_75 part with 40 SMs and 15 GiB). */
static const struct { int attribute, value; } BUILTIN_ATTRIBUTES[] = {
    { CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024 },
    { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024 },
    { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024 },
    { CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64 },
    { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647 },
    { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535 },
    { CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535 },
    { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152 },
    { CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536 },
    { CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32 },
    { CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2147483647 },
    { CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536 },
    { CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1590000 },
    { CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512 },
    { CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 1 },
    { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 40 },
    { CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1 },
    { CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_COMPUTEMODE_DEFAULT },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 131072 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, 131072 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, 65536 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, 2048 },
    { CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, 512 },
    { CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1 },
    { CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1 },
    { CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 5001000 },
    { CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 256 },
    { CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 4194304 },
    { CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 1024 },
    { CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 3 },
    { CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, 2048 },
    { CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, 1 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, 8192 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, 8192 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, 32768 },
    { CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 32 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS, 2046 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, 131072 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, 65536 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, 16384 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS, 2048 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS, 2048 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS, 2046 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, 268435456 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, 131072 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, 65000 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, 2097120 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT, 32768 },
    { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 7 },
    { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 5 },
    { CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH, 32768 },
    { CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 65536 },
    { CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536 },
    { CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1 },
    { CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, 32 },
    { CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1 },
    { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 65536 },
    { CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 16 },
    { CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 0 },
    { CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1 },
    { CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, 1 },
    { CU_DEVICE_ATTRIBUTE_NUMA_ID, -1 },
    { CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, -1 },
};

/* A fixed, recognisable UUID for the emulated device ("cricket-emu-sm75" in ASCII). */
static const unsigned char BUILTIN_UUID[16] = "cricket-emu-sm75";

static void builtin_device(struct cricket_drv_device *d, int ordinal)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", BUILTIN_NAME);
    memcpy(d->uuid.bytes, BUILTIN_UUID, sizeof d->uuid.bytes);
    d->uuid.bytes[15] = (char)(d->uuid.bytes[15] + ordinal);
    d->total_mem = (size_t)15 << 30;
    for (size_t i = 0; i < sizeof BUILTIN_ATTRIBUTES / sizeof BUILTIN_ATTRIBUTES[0]; i++)
        d->attributes[BUILTIN_ATTRIBUTES[i].attribute] = BUILTIN_ATTRIBUTES[i].value;
    d->attributes[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 1 + ordinal;
}

static int parse_hex_uuid(const char *text, CUuuid *out)
{
    for (int i = 0; i < 16; i++) {
        unsigned value;
        while (*text == '-')
            text++;
        if (!isxdigit((unsigned char)text[0]) || !isxdigit((unsigned char)text[1])
            || sscanf(text, "%2x", &value) != 1)
            return -1;
        out->bytes[i] = (char)value;
        text += 2;
    }
    while (isspace((unsigned char)*text))
        text++;
    return *text ? -1 : 0;
}

/* Fills `s` from FILE; on any error logs file:line and what is wrong, and returns -1. */
/* A file must describe a device; the server's snapshot may have none (CUDA_VISIBLE_DEVICES hides
 * them all: cuInit then fails with CUDA_ERROR_NO_DEVICE, as NVIDIA's driver does). A file's device
 * starts from the built-in values; a server's starts from nothing: HELLO lists every attribute,
 * and the runtime shim answers from the same list, so an attribute it lacks is 0 in both. */
static int load_stream(FILE *f, const char *path, struct cricket_drv_snapshot *s, int from_server)
{
    char line[512];
    int lineno = 0, rc = 0;
    s->device_count = 0;
    struct cricket_drv_device *d = NULL;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *key = line;
        while (isspace((unsigned char)*key))
            key++;
        if (!*key)
            continue;
        char *value = key;
        while (*value && !isspace((unsigned char)*value))
            value++;
        if (*value)
            *value++ = 0;
        while (isspace((unsigned char)*value))
            value++;
        char *end = value + strlen(value);
        while (end > value && isspace((unsigned char)end[-1]))
            *--end = 0;
        const char *problem = NULL;
        if (!strcmp(key, "driver_version")) {
            char *stop;
            long v = strtol(value, &stop, 10);
            if (*stop || v <= 0 || v > 1000000) problem = "driver_version needs a positive integer";
            else s->driver_version = (int)v;
        } else if (!strcmp(key, "device")) {
            if (s->device_count == CRICKET_DRV_MAX_DEVICES) problem = "too many devices (at most 16)";
            else {
                d = &s->devices[s->device_count];
                if (from_server) {
                    memset(d, 0, sizeof *d);
                    s->device_count++;
                } else {
                    builtin_device(d, s->device_count++);
                }
            }
        } else if (!d) {
            problem = "a `device` line must come before device properties";
        } else if (!strcmp(key, "name")) {
            if (!*value || strlen(value) >= sizeof d->name) problem = "name must have 1 to 255 characters";
            else memcpy(d->name, value, strlen(value) + 1);
        } else if (!strcmp(key, "uuid")) {
            if (parse_hex_uuid(value, &d->uuid)) problem = "uuid needs 32 hex digits";
        } else if (!strcmp(key, "total_mem")) {
            char *stop;
            unsigned long long v = strtoull(value, &stop, 10);
            if (*stop || !v) problem = "total_mem needs a positive integer";
            else d->total_mem = (size_t)v;
        } else if (!strcmp(key, "attr")) {
            char *stop;
            long attribute = strtol(value, &stop, 10);
            long v = strtol(stop, &end, 10);
            if (stop == value || end == stop || *end || attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX)
                problem = "attr needs an attribute number (1..CU_DEVICE_ATTRIBUTE_MAX-1) and a value";
            else d->attributes[attribute] = (int)v;
        } else {
            problem = "unknown key (driver_version, device, name, uuid, total_mem, attr)";
        }
        if (problem) {
            cricket_drv_log(CRICKET_DRV_ERROR, "%s:%d: %s", path, lineno, problem);
            rc = -1;
        }
    }
    if (rc == 0 && s->device_count == 0 && !from_server) {
        cricket_drv_log(CRICKET_DRV_ERROR, "%s describes no device (no `device` line)", path);
        rc = -1;
    }
    return rc;
}

static int load_file(const char *path, struct cricket_drv_snapshot *s)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cricket_drv_log(CRICKET_DRV_ERROR, "CRICKET_DRIVER_DEVICES=%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = load_stream(f, path, s, 0);
    fclose(f);
    return rc;
}

/* The server's HELLO snapshot, written by the client in the file format above. */
static int load_from_server(struct cricket_drv_snapshot *s)
{
    enum { SIZE = 1 << 18 };
    char *text = calloc(1, SIZE);
    if (!text)
        return -1;
    uint64_t args[2] = { (uint64_t)(uintptr_t)text, SIZE - 1 };
    CUresult rc = cricket_drv_client_call("cricketDeviceSnapshot", args, 2);
    int result = -1;
    if (rc != CUDA_SUCCESS) {
        cricket_drv_log(CRICKET_DRV_ERROR, "no device snapshot from the cricket server at %s (error %d); "
                        "check that it runs, or set CRICKET_DRIVER_DEVICES", getenv("CRICKET_SERVER"), (int)rc);
    } else {
        FILE *f = fmemopen(text, strlen(text), "r");
        if (f) {
            result = load_stream(f, "the server's HELLO snapshot", s, 1);
            fclose(f);
        }
    }
    free(text);
    return result;
}

static void load_snapshot(void)
{
    snapshot.driver_version = BUILTIN_DRIVER_VERSION;
    const char *path = getenv("CRICKET_DRIVER_DEVICES");
    const char *server = getenv("CRICKET_SERVER");
    if ((!path || !*path) && server && *server) {
        if (load_from_server(&snapshot) == 0) {
            snapshot.source = "server";
            cricket_drv_log(CRICKET_DRV_INFO, "%d device(s) from the server at %s", snapshot.device_count, server);
        } else {
            snapshot.device_count = 0;
            snapshot.source = "server (unreachable)";
        }
        return;
    }
    if (path && *path && strcmp(path, "builtin") != 0) {
        if (load_file(path, &snapshot) == 0) {
            snapshot.source = "CRICKET_DRIVER_DEVICES";
            cricket_drv_log(CRICKET_DRV_INFO, "%d device(s) from %s", snapshot.device_count, path);
            return;
        }
        cricket_drv_log(CRICKET_DRV_ERROR, "no devices: fix CRICKET_DRIVER_DEVICES=%s", path);
        snapshot.device_count = 0;
        snapshot.source = "CRICKET_DRIVER_DEVICES (invalid)";
        return;
    }
    snapshot.device_count = 1;
    builtin_device(&snapshot.devices[0], 0);
    snapshot.source = "built-in emulated sm_75";
    cricket_drv_log(CRICKET_DRV_INFO, "answering with the built-in emulated sm_75 device (no server snapshot yet)");
}

const struct cricket_drv_snapshot *cricket_drv_snapshot(void)
{
    pthread_once(&snapshot_once, load_snapshot);
    return &snapshot;
}

CUresult cricket_drv_check_init(void)
{
    return CRICKET_LIKELY(atomic_load_explicit(&initialised, memory_order_acquire))
           ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

static const struct cricket_drv_device *device_at(CUdevice dev)
{
    const struct cricket_drv_snapshot *s = cricket_drv_snapshot();
    return dev >= 0 && dev < s->device_count ? &s->devices[dev] : NULL;
}

/* Checks init and the ordinal; on success *out is the device. */
static CUresult lookup(CUdevice dev, const struct cricket_drv_device **out)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    *out = device_at(dev);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* ------------------------------------------------------------------ exported entry points */

CRICKET_DRV_EXPORT CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const struct cricket_drv_snapshot *s = cricket_drv_snapshot();
    if (s->device_count == 0)
        return CUDA_ERROR_NO_DEVICE;
    atomic_store_explicit(&initialised, 1, memory_order_release);
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = cricket_drv_snapshot()->driver_version;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetCount(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cricket_drv_check_init();
    if (rc == CUDA_SUCCESS)
        *count = cricket_drv_snapshot()->device_count;
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!device_at(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "%s", d->name);
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS)
        *bytes = d->total_mem;
    return rc;
}

/* The CUDA 3.1-era ABI with a 32-bit size: clamped as the real driver does. */
CRICKET_DRV_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t full;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cuDeviceTotalMem_v2(&full, dev);
    if (rc == CUDA_SUCCESS)
        *bytes = full > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned int)full;
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS)
        *pi = d->attributes[attrib];
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS)
        *uuid = d->uuid;
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

CRICKET_DRV_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS) {
        *major = d->attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
        *minor = d->attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
    }
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    const struct cricket_drv_device *d;
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = lookup(dev, &d);
    if (rc == CUDA_SUCCESS)
        snprintf(pciBusId, (size_t)len, "%08x:%02x:%02x.0",
                 (unsigned)d->attributes[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID],
                 (unsigned)d->attributes[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID],
                 (unsigned)d->attributes[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID]);
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    unsigned domain = 0, bus, device;
    if (!dev || !pciBusId)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (sscanf(pciBusId, "%x:%x:%x", &domain, &bus, &device) != 3) {
        domain = 0;
        if (sscanf(pciBusId, "%x:%x", &bus, &device) != 2)
            return CUDA_ERROR_INVALID_VALUE;
    }
    const struct cricket_drv_snapshot *s = cricket_drv_snapshot();
    for (int i = 0; i < s->device_count; i++) {
        const int *a = s->devices[i].attributes;
        if ((unsigned)a[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID] == domain && (unsigned)a[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] == bus
            && (unsigned)a[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID] == device) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}

CRICKET_DRV_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    const char *env = getenv("CUDA_MODULE_LOADING");
    *mode = env && !strcasecmp(env, "EAGER") ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
