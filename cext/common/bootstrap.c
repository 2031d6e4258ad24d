/* Lifecycle shared by cricket's native CUDA libraries: finding or starting Python, importing the
 * client module, threads, fork and exit (a parameterised copy of cext/preload/shim.c's lifecycle;
 * see bootstrap.h). Every Python C-API function is looked up with dlsym at the first CUDA call
 * that reaches the client (never in a constructor: a library's fatbin may register before our
 * constructor runs, and in a Python host the interpreter is not initialised yet while
 * constructors run).
 *
 * Rules (each one from a crash or hang, see docs/cuda-interception.md):
 * - host Python (ctypes, cuda-python, CuPy): use the running interpreter, never install fork
 *   handlers that touch it (os.fork already runs PyOS_BeforeFork/AfterFork) and never finalise it;
 * - native host: load CRICKET_LIBPYTHON, Py_InitializeEx(0) with program name CRICKET_PYTHON,
 *   put CRICKET_PYTHONPATH on sys.path, restore SIGINT/SIGTERM/SIGPIPE after the import,
 *   pthread_atfork around the interpreter, and Py_FinalizeEx from an atexit handler registered
 *   at the first call (before the program's own CUDA exit hooks, so that those run first);
 * - the client's Python atexit handler marks the library DEAD; afterwards nothing touches Python;
 * - a native thread gets one PyThreadState, kept until the thread exits.
 * Two libraries using this code in one process each keep their own state: the first to start
 * owns the interpreter, the second finds it running and uses it as a host interpreter.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "bootstrap.h"

typedef void PyObject;
typedef void PyThreadState;
typedef int PyGILState_STATE;

atomic_int cricket_bootstrap_state = CRICKET_BS_UNINIT;
__thread int cricket_bootstrap_thread_ready;
static const struct cricket_bootstrap_config *cfg;

static struct python_api {
    int (*Py_IsInitialized)(void);
    void (*Py_InitializeEx)(int);
    int (*Py_FinalizeEx)(void);
    PyThreadState *(*PyEval_SaveThread)(void);
    void (*PyEval_RestoreThread)(PyThreadState *);
    PyGILState_STATE (*PyGILState_Ensure)(void);
    void (*PyGILState_Release)(PyGILState_STATE);
    PyThreadState *(*PyGILState_GetThisThreadState)(void);
    PyObject *(*PyImport_ImportModule)(const char *);
    PyObject *(*PyObject_GetAttrString)(PyObject *, const char *);
    PyObject *(*PyDict_GetItemString)(PyObject *, const char *);
    const char *(*PyCapsule_GetName)(PyObject *);
    void *(*PyCapsule_GetPointer)(PyObject *, const char *);
    int (*PyRun_SimpleStringFlags)(const char *, void *);
    void (*Py_DecRef)(PyObject *);
    void (*PyErr_Print)(void);
    /* optional: absent or renamed in some Python versions */
    void (*PyThreadState_Clear)(PyThreadState *);
    void (*PyThreadState_DeleteCurrent)(void);
    void (*PyOS_BeforeFork)(void);
    void (*PyOS_AfterFork_Parent)(void);
    void (*PyOS_AfterFork_Child)(void);
    void (*Py_SetProgramName)(const wchar_t *);
    wchar_t *(*Py_DecodeLocale)(const char *, size_t *);
    int (*Py_IsFinalizing)(void);
} py;

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int t_starting;       /* this thread is inside start_client (re-entry guard) */
static int owned;                     /* we initialised the interpreter */
static pthread_t owner_thread;        /* the thread that initialised it (the only one to finalise) */
static pthread_key_t thread_state_key;

/* ------------------------------------------------------------------ finding Python */

static int load_python_api(void *handle)
{
    struct { const char *name; void **slot; int required; } table[] = {
#define REQ(f) { #f, (void **)&py.f, 1 }
#define OPT(f) { #f, (void **)&py.f, 0 }
        REQ(Py_IsInitialized), REQ(Py_InitializeEx), REQ(Py_FinalizeEx), REQ(PyEval_SaveThread),
        REQ(PyEval_RestoreThread), REQ(PyGILState_Ensure), REQ(PyGILState_Release),
        REQ(PyGILState_GetThisThreadState), REQ(PyImport_ImportModule), REQ(PyObject_GetAttrString),
        REQ(PyDict_GetItemString), REQ(PyCapsule_GetName), REQ(PyCapsule_GetPointer),
        REQ(PyRun_SimpleStringFlags), REQ(Py_DecRef), REQ(PyErr_Print),
        OPT(PyThreadState_Clear), OPT(PyThreadState_DeleteCurrent), OPT(PyOS_BeforeFork),
        OPT(PyOS_AfterFork_Parent), OPT(PyOS_AfterFork_Child), OPT(Py_SetProgramName),
        OPT(Py_DecodeLocale), OPT(Py_IsFinalizing),
#undef REQ
#undef OPT
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].slot = dlsym(handle, table[i].name);
        if (!*table[i].slot && table[i].required) {
            cfg->log(CRICKET_BS_ERROR, "the Python runtime in this process lacks %s; "
                        "cricket needs CPython >= 3.11", table[i].name);
            return -1;
        }
    }
    if (!py.Py_IsFinalizing)        /* public only since 3.13 */
        py.Py_IsFinalizing = (int (*)(void))dlsym(handle, "_Py_IsFinalizing");
    return 0;
}

static int python_finalizing(void)
{
    return py.Py_IsFinalizing ? py.Py_IsFinalizing() : 0;
}

/* ------------------------------------------------------------------ the client module */

static void mark_dead(void)
{
    atomic_store(&cricket_bootstrap_state, CRICKET_BS_DEAD);
}

static int take_client_api(int embedded)
{
    /* The capsule names are Cython's rendering of each C signature: checking them catches a
     * module built from a .pyx that no longer matches the library. */
    PyObject *module = py.PyImport_ImportModule(cfg->module);
    if (!module) {
        py.PyErr_Print();
        cfg->log(CRICKET_BS_ERROR, "cannot import %s: build it (make build) and, for a native program, "
                 "run it with `cricket run -- CMD` or set CRICKET_PYTHONPATH", cfg->module);
        return -1;
    }
    PyObject *capi = py.PyObject_GetAttrString(module, "__pyx_capi__");
    py.Py_DecRef(module);            /* sys.modules keeps it */
    if (!capi) {
        py.PyErr_Print();
        cfg->log(CRICKET_BS_ERROR, "%s has no __pyx_capi__: it is not the compiled module", cfg->module);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < cfg->capi_count && rc == 0; i++) {
        const struct cricket_bootstrap_capi *entry = &cfg->capi[i];
        PyObject *capsule = py.PyDict_GetItemString(capi, entry->name);
        const char *signature = capsule ? py.PyCapsule_GetName(capsule) : NULL;
        if (!signature || strcmp(signature, entry->signature) != 0) {
            cfg->log(CRICKET_BS_ERROR, "%s provides %s as \"%s\", the library expects \"%s\"; "
                     "rebuild both (make build)", cfg->module, entry->name,
                     signature ? signature : "nothing", entry->signature);
            rc = -1;
            break;
        }
        *entry->slot = py.PyCapsule_GetPointer(capsule, signature);
        if (!*entry->slot) {
            py.PyErr_Print();
            rc = -1;
        }
    }
    py.Py_DecRef(capi);
    if (rc == 0 && (*cfg->attach)(mark_dead, embedded) != 0) {
        cfg->log(CRICKET_BS_ERROR, "the cricket client refused to start (see the Python traceback above)");
        rc = -1;
    }
    return rc;
}

/* ------------------------------------------------------------------ threads */

static void release_thread_state(void *ts)
{
    /* glibc has already cleared Python's own thread-specific slot here, so PyGILState_Release
     * would abort: delete the kept state explicitly. */
    if (atomic_load(&cricket_bootstrap_state) != CRICKET_BS_READY || python_finalizing()
        || !py.PyThreadState_Clear || !py.PyThreadState_DeleteCurrent)
        return;
    py.PyEval_RestoreThread(ts);
    py.PyThreadState_Clear(ts);
    py.PyThreadState_DeleteCurrent();
}

static void adopt_thread(void)
{
    if (!py.PyGILState_GetThisThreadState()) {
        /* A native thread: create its thread state once and keep it (its gilstate counter stays
         * at 1, so the Ensure/Release pairs of the client's `with gil` never delete it). */
        py.PyGILState_Ensure();
        PyThreadState *ts = py.PyEval_SaveThread();
        pthread_setspecific(thread_state_key, ts);
    }
    cricket_bootstrap_thread_ready = 1;
}

/* ------------------------------------------------------------------ owned interpreter: exit, fork */

static void finalize_owned(void)
{
    atomic_store(&cricket_bootstrap_state, CRICKET_BS_DEAD);
    PyThreadState *ts = py.PyGILState_GetThisThreadState();
    if (!pthread_equal(pthread_self(), owner_thread) || !ts || python_finalizing()) {
        cfg->log(CRICKET_BS_DEBUG, "not finalising Python: exit from another thread than the one that started it, or already finalising");
        return;
    }
    py.PyEval_RestoreThread(ts);
    py.Py_FinalizeEx();
}

/* Registered once, at the start of the first call, in every mode. For an interpreter we own, the
 * fork is bracketed like os.fork does it (a thread looping on CUDA calls would otherwise leave the
 * GIL held by a thread that does not exist in the child). In a Python host os.fork already does
 * that, and doing it twice could deadlock. In every mode the child re-creates start_lock: a start
 * in progress in another thread at fork time is abandoned with that thread. */
static int fork_holds_gil;
static PyGILState_STATE fork_gil;

static void fork_prepare(void)
{
    fork_holds_gil = owned && atomic_load(&cricket_bootstrap_state) == CRICKET_BS_READY && !python_finalizing()
                     && py.PyOS_BeforeFork && py.PyOS_AfterFork_Parent && py.PyOS_AfterFork_Child;
    if (fork_holds_gil) {
        fork_gil = py.PyGILState_Ensure();
        py.PyOS_BeforeFork();
    }
}

static void fork_parent(void)
{
    if (fork_holds_gil) {
        py.PyOS_AfterFork_Parent();
        py.PyGILState_Release(fork_gil);
    }
}

static void fork_child(void)
{
    pthread_mutex_init(&start_lock, NULL);
    if (fork_holds_gil) {
        py.PyOS_AfterFork_Child();
        py.PyGILState_Release(fork_gil);
        owner_thread = pthread_self();    /* the only thread left; it may finalise */
    }
}

/* ------------------------------------------------------------------ start */

static const char BOOTSTRAP[] =
    "def _cricket_add_paths():\n"
    "    import os, sys, site\n"
    "    for p in reversed([p for p in os.environ.get('CRICKET_PYTHONPATH', '').split(os.pathsep) if p]):\n"
    "        if p not in sys.path:\n"
    "            sys.path.insert(0, p)\n"
    "        site.addsitedir(p)\n"
    "_cricket_add_paths()\n"
    "del _cricket_add_paths\n";

static int start_in_host(void)
{
    PyGILState_STATE gil = py.PyGILState_Ensure();
    int rc = take_client_api(0);
    py.PyGILState_Release(gil);
    return rc == 0 ? CRICKET_BS_READY : CRICKET_BS_FAILED;
}

static int start_owned(void)
{
    static const int kept_signals[] = { SIGINT, SIGTERM, SIGPIPE };
    struct sigaction saved[3];
    for (int i = 0; i < 3; i++)
        sigaction(kept_signals[i], NULL, &saved[i]);

    const char *exe = getenv("CRICKET_PYTHON");
    if (exe && *exe && py.Py_SetProgramName && py.Py_DecodeLocale) {
        wchar_t *wexe = py.Py_DecodeLocale(exe, NULL);   /* kept: Python keeps the pointer */
        if (wexe)
            py.Py_SetProgramName(wexe);
    }
    py.Py_InitializeEx(0);
    if (!py.Py_IsInitialized()) {
        cfg->log(CRICKET_BS_ERROR, "Py_InitializeEx failed for %s", getenv("CRICKET_LIBPYTHON"));
        return CRICKET_BS_FAILED;
    }
    owned = 1;
    owner_thread = pthread_self();
    if (py.PyRun_SimpleStringFlags(BOOTSTRAP, NULL) != 0)
        cfg->log(CRICKET_BS_WARNING, "could not add CRICKET_PYTHONPATH to sys.path");
    int rc = take_client_api(1);
    /* Importing anything that imports `signal` re-installs Python's handlers: undo that. */
    for (int i = 0; i < 3; i++)
        sigaction(kept_signals[i], &saved[i], NULL);
    py.PyEval_SaveThread();        /* the main thread state stays with this thread */
    cricket_bootstrap_thread_ready = 1;
    atexit(finalize_owned);
    return rc == 0 ? CRICKET_BS_READY : CRICKET_BS_FAILED;
}

static int start_client(void)
{
    static int fork_handlers_installed, thread_key_created;
    if (!fork_handlers_installed) {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        fork_handlers_installed = 1;
    }
    void *handle = RTLD_DEFAULT;
    int (*is_initialized)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    int host = is_initialized && is_initialized();
    if (!host) {
        const char *libpython = getenv("CRICKET_LIBPYTHON");
        if (is_initialized) {
            cfg->log(CRICKET_BS_ERROR, "Python is loaded in this process but not running "
                        "(not yet initialised or already finalised); not starting another one");
            return CRICKET_BS_FAILED;
        }
        if (!libpython || !*libpython) {
            cfg->log(CRICKET_BS_ERROR, "no Python in this process and CRICKET_LIBPYTHON is not set; "
                        "run the program with `cricket run -- CMD`");
            return CRICKET_BS_FAILED;
        }
        handle = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL);
        if (!handle) {
            cfg->log(CRICKET_BS_ERROR, "cannot load CRICKET_LIBPYTHON=%s: %s", libpython, dlerror());
            return CRICKET_BS_FAILED;
        }
    }
    if (load_python_api(handle) != 0)
        return CRICKET_BS_FAILED;
    if (!thread_key_created) {
        if (pthread_key_create(&thread_state_key, release_thread_state) != 0) {
            cfg->log(CRICKET_BS_ERROR, "pthread_key_create failed");
            return CRICKET_BS_FAILED;
        }
        thread_key_created = 1;
    }
    int state = host ? start_in_host() : start_owned();
    cfg->log(CRICKET_BS_DEBUG, "client %s (%s interpreter)", state == CRICKET_BS_READY ? "ready" : "failed",
                host ? "host" : "embedded");
    return state;
}

int cricket_bootstrap_enter_slow(const struct cricket_bootstrap_config *config)
{
    if (!cfg)
        cfg = config;   /* one configuration per library */
    int state = atomic_load(&cricket_bootstrap_state);
    if (state == CRICKET_BS_UNINIT) {
        if (t_starting)            /* a CUDA call made while the client itself is being imported */
            return CRICKET_BS_FAILED;
        pthread_mutex_lock(&start_lock);
        state = atomic_load(&cricket_bootstrap_state);
        if (state == CRICKET_BS_UNINIT) {
            t_starting = 1;
            state = start_client();
            t_starting = 0;
            /* READY unless the client's atexit already ran (a DEAD set meanwhile stays). */
            int expected = CRICKET_BS_UNINIT;
            atomic_compare_exchange_strong(&cricket_bootstrap_state, &expected, state);
            state = atomic_load(&cricket_bootstrap_state);
        }
        pthread_mutex_unlock(&start_lock);
    }
    if (state != CRICKET_BS_READY)
        return state;
    if (!cricket_bootstrap_thread_ready)
        adopt_thread();
    return 0;
}
