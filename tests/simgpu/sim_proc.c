/* sim_proc.c - simgpu's entry-point lookup (cuGetProcAddress*, answered from the
 * table generated out of variants.tsv), error names/strings, and the export
 * table query that a fake driver cannot serve. */
#include "sim_internal.h"
#include <string.h>

/* (name, version) -> exported function, as the driver picks it: the newest
 * variant whose version is <= cudaVersion; with flag 2 the _ptsz/_ptds variant
 * when the name has one at that version, else the plain one */
static CUresult lookup(const char *symbol, void **pfn, int version, unsigned long long flags,
                       int *status)
{
    int dummy;
    if (!status)
        status = &dummy;
    if (!symbol || !pfn || (flags & ~3ull))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    const struct simgpu_variant *best[2] = { NULL, NULL };  /* [plain, per-thread] */
    int known = 0;
    for (int i = 0; i < simgpu_nvariants; i++) {
        const struct simgpu_variant *v = &simgpu_variants[i];
        if (strcmp(v->name, symbol) != 0)
            continue;
        known = 1;
        int k = v->flags ? 1 : 0;
        if (v->version <= version && (!best[k] || v->version > best[k]->version))
            best[k] = v;
    }
    const struct simgpu_variant *pick = best[0];
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best[1] &&
        (!pick || best[1]->version >= pick->version))
        pick = best[1];
    if (!pick) {
        *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    memcpy(pfn, &pick->fn, sizeof *pfn);  /* function pointer -> void * */
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                             unsigned long long flags, int *status)
{
    return lookup(symbol, pfn, cudaVersion, flags, status);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                          unsigned long long flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
    { 0, "CUDA_SUCCESS", "no error" },
    { 1, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { 4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
    { 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { 200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
    { 201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { 301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found" },
    { 304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS" },
    { 400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { 600, "CUDA_ERROR_NOT_READY", "device not ready" },
    { 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
    { 712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
      "part or all of the requested memory range is already mapped" },
    { 713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region" },
    { 801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
    { 999, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_lookup(CUresult err, const char **str, int want_text)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err) {
            *str = want_text ? errors[i].text : errors[i].name;
            return CUDA_SUCCESS;
        }
    *str = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult err, const char **str) { return error_lookup(err, str, 0); }
CUresult cuGetErrorString(CUresult err, const char **str) { return error_lookup(err, str, 1); }
