/*
 * nvtx_stub.h: a test double of the NVTX loader, so the examples and tests
 * can annotate ranges the way real programs do without the CUDA toolkit.
 * It follows the documented load sequence of NVTX (shim/nvtx_iface.h holds
 * the interface facts): on the first NVTX call, if NVTX_INJECTION64_PATH
 * names a library, dlopen it, call its InitializeInjectionNvtx2 with our
 * export-table getter, and from then on call whatever the tool stored in
 * our function-pointer slots; no tool (or a tool that declines) leaves
 * every call a no-op. Only what the examples and tests use is here: the
 * core module's Mark, RangeStart/End, RangePush/Pop (A, W and Ex forms)
 * and the domain module's MarkEx, RangeStartEx/End, RangePushEx/Pop and
 * RegisterStringA. Functions are static: each program gets its own copy.
 */
#ifndef FT_NVTX_STUB_H
#define FT_NVTX_STUB_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../shim/nvtx_iface.h"

typedef struct ft_nvtx_attr nvtxEventAttributes_t;
typedef ft_nvtx_range_id nvtxRangeId_t;
typedef ft_nvtx_domain nvtxDomainHandle_t;
typedef const void *nvtxStringHandle_t;
#define NVTX_VERSION 3
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))
#define NVTX_MESSAGE_TYPE_ASCII FT_NVTX_MESSAGE_ASCII
#define NVTX_MESSAGE_TYPE_REGISTERED FT_NVTX_MESSAGE_REGISTERED

/* the loader's slots, one per callback id, and the tables pointing at them */
static struct {
	void (*MarkEx)(const nvtxEventAttributes_t *);
	void (*MarkA)(const char *);
	void (*MarkW)(const wchar_t *);
	nvtxRangeId_t (*RangeStartEx)(const nvtxEventAttributes_t *);
	nvtxRangeId_t (*RangeStartA)(const char *);
	nvtxRangeId_t (*RangeStartW)(const wchar_t *);
	void (*RangeEnd)(nvtxRangeId_t);
	int (*RangePushEx)(const nvtxEventAttributes_t *);
	int (*RangePushA)(const char *);
	int (*RangePushW)(const wchar_t *);
	int (*RangePop)(void);
	void (*DomainMarkEx)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
	nvtxRangeId_t (*DomainRangeStartEx)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
	void (*DomainRangeEnd)(nvtxDomainHandle_t, nvtxRangeId_t);
	int (*DomainRangePushEx)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
	int (*DomainRangePop)(nvtxDomainHandle_t);
	nvtxStringHandle_t (*DomainRegisterStringA)(nvtxDomainHandle_t, const char *);
} nvtx_stub;
static ft_nvtx_fn *nvtx_stub_core[FT_NVTX_CBID_CORE_SIZE + 1];
static ft_nvtx_fn *nvtx_stub_core2[FT_NVTX_CBID_CORE2_SIZE + 1];
static pthread_once_t nvtx_stub_once = PTHREAD_ONCE_INIT;

static int nvtx_stub_module_table(int module, ft_nvtx_table *out, unsigned *size)
{
	ft_nvtx_table t = module == FT_NVTX_CB_MODULE_CORE ? nvtx_stub_core :
			  module == FT_NVTX_CB_MODULE_CORE2 ? nvtx_stub_core2 : NULL;
	if (!t)
		return 0;
	if (out)
		*out = t;
	if (size)          /* entries less one, as NVTX counts them */
		*size = (module == FT_NVTX_CB_MODULE_CORE ? FT_NVTX_CBID_CORE_SIZE
							   : FT_NVTX_CBID_CORE2_SIZE);
	return 1;
}

static void nvtx_stub_set_version(uint32_t v) { (void)v; }

static const struct ft_nvtx_callbacks nvtx_stub_callbacks = {
	sizeof(struct ft_nvtx_callbacks), nvtx_stub_module_table };
static const struct ft_nvtx_versioninfo nvtx_stub_version = {
	sizeof(struct ft_nvtx_versioninfo), NVTX_VERSION, 0, nvtx_stub_set_version };

static const void *nvtx_stub_export_table(uint32_t id)
{
	return id == FT_NVTX_ETID_CALLBACKS ? (const void *)&nvtx_stub_callbacks :
	       id == FT_NVTX_ETID_VERSIONINFO ? (const void *)&nvtx_stub_version : NULL;
}

#define NVTX_STUB_SLOT(tab, id, field) (tab[id] = (ft_nvtx_fn *)(void *)&nvtx_stub.field)

static void nvtx_stub_load(void)
{
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_MarkEx, MarkEx);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_MarkA, MarkA);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_MarkW, MarkW);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangeStartA, RangeStartA);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangeStartW, RangeStartW);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangeEnd, RangeEnd);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangePushEx, RangePushEx);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangePushA, RangePushA);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangePushW, RangePushW);
	NVTX_STUB_SLOT(nvtx_stub_core, FT_NVTX_CBID_CORE_RangePop, RangePop);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
	NVTX_STUB_SLOT(nvtx_stub_core2, FT_NVTX_CBID_CORE2_DomainRegisterStringA,
		       DomainRegisterStringA);
	const char *path = getenv("NVTX_INJECTION64_PATH");
	void *lib = path && *path ? dlopen(path, RTLD_LAZY) : NULL;
	int (*init)(const void *(*)(uint32_t)) =
		lib ? (int (*)(const void *(*)(uint32_t)))dlsym(lib, "InitializeInjectionNvtx2") : NULL;
	if (!init || !init(nvtx_stub_export_table)) {
		static const char zero[sizeof nvtx_stub];
		memcpy(&nvtx_stub, zero, sizeof nvtx_stub);   /* declined: all no-ops */
	}
}

#define NVTX_STUB_CALL(field, none, ...) \
	(pthread_once(&nvtx_stub_once, nvtx_stub_load), \
	 nvtx_stub.field ? nvtx_stub.field(__VA_ARGS__) : none)

static inline void nvtxMarkA(const char *m) { NVTX_STUB_CALL(MarkA, (void)0, m); }
static inline void nvtxMarkW(const wchar_t *m) { NVTX_STUB_CALL(MarkW, (void)0, m); }
static inline void nvtxMarkEx(const nvtxEventAttributes_t *a) { NVTX_STUB_CALL(MarkEx, (void)0, a); }
static inline nvtxRangeId_t nvtxRangeStartA(const char *m) { return NVTX_STUB_CALL(RangeStartA, 0, m); }
static inline nvtxRangeId_t nvtxRangeStartW(const wchar_t *m) { return NVTX_STUB_CALL(RangeStartW, 0, m); }
static inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t *a)
{
	return NVTX_STUB_CALL(RangeStartEx, 0, a);
}
static inline void nvtxRangeEnd(nvtxRangeId_t id) { NVTX_STUB_CALL(RangeEnd, (void)0, id); }
static inline int nvtxRangePushA(const char *m) { return NVTX_STUB_CALL(RangePushA, -2, m); }
static inline int nvtxRangePushW(const wchar_t *m) { return NVTX_STUB_CALL(RangePushW, -2, m); }
static inline int nvtxRangePushEx(const nvtxEventAttributes_t *a) { return NVTX_STUB_CALL(RangePushEx, -2, a); }
static inline int nvtxRangePop(void) { return NVTX_STUB_CALL(RangePop, -2); }
static inline void nvtxDomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	NVTX_STUB_CALL(DomainMarkEx, (void)0, d, a);
}
static inline nvtxRangeId_t nvtxDomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return NVTX_STUB_CALL(DomainRangeStartEx, 0, d, a);
}
static inline void nvtxDomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	NVTX_STUB_CALL(DomainRangeEnd, (void)0, d, id);
}
static inline int nvtxDomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return NVTX_STUB_CALL(DomainRangePushEx, -2, d, a);
}
static inline int nvtxDomainRangePop(nvtxDomainHandle_t d) { return NVTX_STUB_CALL(DomainRangePop, -2, d); }
static inline nvtxStringHandle_t nvtxDomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	return NVTX_STUB_CALL(DomainRegisterStringA, NULL, d, s);
}

/* an attribute structure with an ASCII (or registered) message */
static inline nvtxEventAttributes_t nvtx_stub_attr(const char *ascii, nvtxStringHandle_t reg)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.message_type = reg ? NVTX_MESSAGE_TYPE_REGISTERED : NVTX_MESSAGE_TYPE_ASCII;
	if (reg)
		a.message.registered = reg;
	else
		a.message.ascii = ascii;
	return a;
}

#endif
