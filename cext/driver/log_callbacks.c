/* The driver's error-log callbacks (cuLogsRegisterCallback, CUDA 12.9+). cuBLAS and PyTorch
 * register one at start-up. cricket's own messages go to stderr (log.c), so a registered callback
 * is kept, to be unregistered by its handle, and is never called. */
#include <pthread.h>
#include <stddef.h>
#include "driver.h"

#define MAX_CALLBACKS 64

struct CUlogsCallbackEntry_st {
    CUlogsCallback function;
    void *user_data;
    int used;
};

static struct CUlogsCallbackEntry_st callbacks[MAX_CALLBACKS];
static pthread_mutex_t callbacks_lock = PTHREAD_MUTEX_INITIALIZER;

CRICKET_DRV_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData,
                                                   CUlogsCallbackHandle *callback_out)
{
    if (!callbackFunc)
        return CUDA_ERROR_INVALID_VALUE;
    CUlogsCallbackHandle handle = NULL;
    pthread_mutex_lock(&callbacks_lock);
    for (size_t i = 0; i < MAX_CALLBACKS && !handle; i++)
        if (!callbacks[i].used) {
            handle = &callbacks[i];
            *handle = (struct CUlogsCallbackEntry_st){ callbackFunc, userData, 1 };
        }
    pthread_mutex_unlock(&callbacks_lock);
    if (!handle) {
        cricket_drv_log(CRICKET_DRV_WARNING, "cuLogsRegisterCallback: all %d callback slots are in use", MAX_CALLBACKS);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (callback_out)
        *callback_out = handle;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&callbacks_lock);
    for (size_t i = 0; i < MAX_CALLBACKS; i++)
        if (callback == &callbacks[i] && callbacks[i].used) {
            callbacks[i].used = 0;
            rc = CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&callbacks_lock);
    return rc;
}
