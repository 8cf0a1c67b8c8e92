/* cudadml.backends._launch: the per-call part of a kernel launch (cudadml.backends.kernels.Launch), in C.
 *
 * A launch's parameter struct is a template of 8-byte words in which each call writes the
 * addresses of its bindings; then cuLaunchKernel copies the struct to the GPU. In Python that
 * costs about 0.8 us for a few addresses and 10 us for 128, more than the launch of a small
 * kernel; here it costs what cuLaunchKernel costs. Optional: setup.py builds it where a C
 * compiler is found, and Launch does the same in Python without it.
 *
 * fill(words, slots, inputs, outputs) -> None
 *     words: a writable buffer of the struct's bytes; slots: int64 quadruples (word, role,
 *     binding, offset): word `word` receives (inputs, outputs)[role][binding] + offset.
 * launch(functions, grid, block, stream, template, slots, inputs, outputs) -> int
 *     fill() on a copy of the bytes `template`, then cuLaunchKernel of functions[current
 *     device] (a dict of CUfunction handles) on `stream`, grid x 1 x 1 blocks of block x 1 x 1
 *     threads. Returns 0 when launched, else nothing was launched and it returns the CUresult
 *     of a driver call, or NO_CONTEXT (this thread has no current context), NO_FUNCTION
 *     (functions lacks the current device) or NO_DRIVER (libcuda cannot be loaded): the
 *     caller's Python route handles these three.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#define NO_FUNCTION (-1)
#define NO_DRIVER (-2)
#define NO_CONTEXT (-3)
/* Kernel parameters are at most 32764 bytes (CUDA 12.1 and newer, Volta and newer). */
#define MOST_WORDS 4096

typedef int (*LaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                            void**, void**);
typedef int (*CtxGetCurrent)(void**);
typedef int (*CtxGetDevice)(int*);
static LaunchKernel cu_launch_kernel;
static CtxGetCurrent cu_ctx_get_current;
static CtxGetDevice cu_ctx_get_device;

/* The driver's entry points, from the libcuda that CuPy has loaded already. */
static int find_driver(void) {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cuda == NULL) cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (cuda == NULL) return 0;
    cu_ctx_get_current = (CtxGetCurrent)dlsym(cuda, "cuCtxGetCurrent");
    cu_ctx_get_device = (CtxGetDevice)dlsym(cuda, "cuCtxGetDevice");
    cu_launch_kernel = (LaunchKernel)dlsym(cuda, "cuLaunchKernel");
    return cu_ctx_get_current != NULL && cu_ctx_get_device != NULL && cu_launch_kernel != NULL;
}

/* Item k of a list or tuple, or NULL where k is out of range (checked before any read). */
static PyObject* sequence_item(PyObject* sequence, int64_t k) {
    const Py_ssize_t size = PyList_Check(sequence) ? PyList_GET_SIZE(sequence) : PyTuple_GET_SIZE(sequence);
    if (k < 0 || k >= size) return NULL;
    return PyList_Check(sequence) ? PyList_GET_ITEM(sequence, k) : PyTuple_GET_ITEM(sequence, k);
}

/* A launch dimension as the driver's unsigned int: 1 to UINT_MAX, else -1 with an exception set. */
static long long launch_dimension(PyObject* value, const char* what) {
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (overflow || n < 1 || n > UINT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s must be an int from 1 to %u", what, UINT_MAX);
        return -1;
    }
    return n;
}

/* Writes the addresses into words[0 .. count); 0, or -1 with an exception set. */
static int fill_words(uint64_t* words, Py_ssize_t count, PyObject* slots, PyObject* inputs, PyObject* outputs) {
    if (!PyBytes_Check(slots) || PyBytes_GET_SIZE(slots) % 32) {
        PyErr_SetString(PyExc_TypeError, "slots must be bytes of int64 quadruples");
        return -1;
    }
    PyObject* bound[2] = {inputs, outputs};
    for (int role = 0; role < 2; ++role) {
        if (!PyList_Check(bound[role]) && !PyTuple_Check(bound[role])) {
            PyErr_SetString(PyExc_TypeError, "addresses must come as lists or tuples of ints");
            return -1;
        }
    }
    const int64_t* slot = (const int64_t*)PyBytes_AS_STRING(slots);
    const Py_ssize_t n = PyBytes_GET_SIZE(slots) / 32;
    for (Py_ssize_t k = 0; k < n; ++k, slot += 4) {
        const int64_t word = slot[0], role = slot[1], binding = slot[2];
        PyObject* address = role == 0 || role == 1 ? sequence_item(bound[role], binding) : NULL;
        if (word < 0 || word >= count || address == NULL) {
            PyErr_Format(PyExc_IndexError, "slot %zd (word %lld, role %lld, binding %lld) is out of range", k,
                         (long long)word, (long long)role, (long long)binding);
            return -1;
        }
        const uint64_t value = PyLong_AsUnsignedLongLong(address);
        if (value == (uint64_t)-1 && PyErr_Occurred()) return -1;
        words[word] = value + (uint64_t)slot[3];
    }
    return 0;
}

static PyObject* fill(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "fill(words, slots, inputs, outputs)");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    int failed = view.len % 8 != 0;
    if (failed) {
        PyErr_SetString(PyExc_ValueError, "words must be whole 8-byte words");
    } else {
        /* Words are written one by one through memcpy: the buffer need not be 8-byte aligned. */
        uint64_t words[MOST_WORDS];
        const Py_ssize_t count = view.len / 8;
        if (count > MOST_WORDS) {
            PyErr_SetString(PyExc_ValueError, "more parameter words than a launch takes");
            failed = 1;
        } else {
            memcpy(words, view.buf, (size_t)view.len);
            failed = fill_words(words, count, args[1], args[2], args[3]);
            if (!failed) memcpy(view.buf, words, (size_t)view.len);
        }
    }
    PyBuffer_Release(&view);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyObject* launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 8 || !PyDict_Check(args[0]) || !PyBytes_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError,
                        "launch(functions: dict, grid, block, stream, template: bytes, slots, inputs, outputs)");
        return NULL;
    }
    const long long grid = launch_dimension(args[1], "grid");
    if (grid < 0) return NULL;
    const long long block = launch_dimension(args[2], "block");
    if (block < 0) return NULL;
    void* stream = PyLong_AsVoidPtr(args[3]);
    if (PyErr_Occurred()) return NULL;
    const Py_ssize_t size = PyBytes_GET_SIZE(args[4]);
    if (size % 8 || size / 8 > MOST_WORDS) {
        PyErr_SetString(PyExc_ValueError, "the template must be whole 8-byte words, at most 32 KiB");
        return NULL;
    }
    uint64_t words[MOST_WORDS];
    memcpy(words, PyBytes_AS_STRING(args[4]), (size_t)size);
    if (fill_words(words, size / 8, args[5], args[6], args[7])) return NULL;
    if (cu_launch_kernel == NULL && !find_driver()) return PyLong_FromLong(NO_DRIVER);
    /* Asked first, as it is no error: cuCtxGetDevice without a context is one, which
     * compute-sanitizer reports. */
    void* context = NULL;
    int status = cu_ctx_get_current(&context);
    if (status) return PyLong_FromLong(status);
    if (context == NULL) return PyLong_FromLong(NO_CONTEXT);
    int device;
    status = cu_ctx_get_device(&device);
    if (status) return PyLong_FromLong(status);
    PyObject* key = PyLong_FromLong(device);
    if (key == NULL) return NULL;
    PyObject* handle = PyDict_GetItemWithError(args[0], key);
    Py_DECREF(key);
    if (handle == NULL) return PyErr_Occurred() ? NULL : PyLong_FromLong(NO_FUNCTION);
    void* function = PyLong_AsVoidPtr(handle);
    if (PyErr_Occurred()) return NULL;
    void* params[1] = {words}; /* the kernel's one parameter: the struct, copied before the call returns */
    Py_BEGIN_ALLOW_THREADS;
    status = cu_launch_kernel(function, (unsigned)grid, 1, 1, (unsigned)block, 1, 1, 0, stream, params, NULL);
    Py_END_ALLOW_THREADS;
    return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL, "Write the addresses of the bindings into words."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "Fill a copy of template and launch."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_launch", "Kernel launches with their binding addresses, in C.", -1, methods, NULL, NULL,
    NULL, NULL,
};

PyMODINIT_FUNC PyInit__launch(void) {
    PyObject* m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddIntConstant(m, "NO_FUNCTION", NO_FUNCTION) ||
                      PyModule_AddIntConstant(m, "NO_DRIVER", NO_DRIVER) ||
                      PyModule_AddIntConstant(m, "NO_CONTEXT", NO_CONTEXT))) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
