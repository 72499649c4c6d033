/*
 * nvtx.c: user ranges and marks. Owns two ways in:
 *   - NVTX: libfeedtrace.so is an NVTX injection library. The NVTX loader
 *     (nvtx3 headers, libnvToolsExt v2) finds it through
 *     NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2, which puts
 *     our functions into the slots of the core module (nvtxMarkEx/A/W,
 *     nvtxRangeStartEx/A/W, nvtxRangeEnd, nvtxRangePushEx/A/W, nvtxRangePop)
 *     and of the domain module that nvtx3's C++ API calls
 *     (nvtxDomainMarkEx, nvtxDomainRangeStartEx, nvtxDomainRangeEnd,
 *     nvtxDomainRangePushEx, nvtxDomainRangePop, nvtxDomainRegisterStringA
 *     and W). Interface facts: nvtx_iface.h.
 *   - feedtrace_range_push(name), feedtrace_range_pop(), feedtrace_mark(name)
 *     for programs without NVTX (Python through ctypes.CDLL(None)).
 * Records RANGE_PUSH, RANGE_POP, RANGE_START, RANGE_END and MARK
 * (events.def) with the process group, so they are recorded whenever
 * tracing is on. Push and pop levels are a per-thread depth; start and end
 * ids come from one process-wide counter. No allocation, lock or output;
 * before the library is ready (or with tracing off) ft_enter says no and
 * nothing but the depth changes.
 */
#include <stdatomic.h>

#include "nvtx_iface.h"
#include "../libfeedtrace/capture.h"
#include "../libfeedtrace/internal.h"

enum { API_NVTX = 0, API_NVTX_DOMAIN = 1, API_FEEDTRACE = 2 };

static __thread int depth FT_TLS;                /* open push ranges of this thread */
static _Atomic uint64_t next_range_id = 1;

/* ---- names ---- */

/* A wide message as ASCII (others become '?'), interned. */
static uint32_t intern_wide(const wchar_t *w)
{
	char buf[256];
	size_t n = 0;
	if (!w)
		return 0;
	for (; w[n] && n < sizeof buf - 1; n++)
		buf[n] = w[n] > 0 && w[n] < 0x7f ? (char)w[n] : '?';
	buf[n] = 0;
	return ft_intern(buf);
}

/* The message of an attribute structure, interned (0: none). A registered
 * string's handle is already its string id (register_string below). */
static uint32_t attr_name(const struct ft_nvtx_attr *a)
{
	if (!a || a->size < offsetof(struct ft_nvtx_attr, message) + sizeof a->message)
		return 0;
	switch (a->message_type) {
	case FT_NVTX_MESSAGE_ASCII: return ft_intern(a->message.ascii);
	case FT_NVTX_MESSAGE_UNICODE: return intern_wide(a->message.unicode);
	case FT_NVTX_MESSAGE_REGISTERED: return (uint32_t)(uintptr_t)a->message.registered;
	default: return 0;
	}
}

static uint32_t of_ascii(const void *s);
static uint32_t of_attr(const void *a);

/* The name as ASCII text, for the capture gate's step boundaries (a wide
 * name: NULL) */
static const char *text_of(uint32_t (*name_of)(const void *), const void *arg)
{
	if (name_of == of_ascii)
		return arg;
	const struct ft_nvtx_attr *a = arg;
	if (name_of != of_attr || !a ||
	    a->size < offsetof(struct ft_nvtx_attr, message) + sizeof a->message)
		return NULL;
	if (a->message_type == FT_NVTX_MESSAGE_ASCII)
		return a->message.ascii;
	if (a->message_type == FT_NVTX_MESSAGE_REGISTERED) {
		const struct ft_string_entry *e =
			ft_strtab_entry((uint32_t)(uintptr_t)a->message.registered);
		return e ? (const char *)(e + 1) : NULL;
	}
	return NULL;
}

/* ---- recording: each takes the name as an id, or a function making it
 * (interned only when the record is made). A push, pop or mark may be a
 * step boundary: a capture window starts before the record of its first
 * step and stops after the record of its last (libfeedtrace/capture.c). ---- */

static int push(uint32_t (*name_of)(const void *), const void *arg, unsigned api)
{
	int level = depth++;
	ft_capture_push(text_of(name_of, arg), level);
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_RANGE_PUSH, now, now, name_of(arg), (uint32_t)level, api, 0);
	}
	return level;
}

static int pop(unsigned api)
{
	int level = depth > 0 ? --depth : -1;
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_RANGE_POP, now, now, (uint32_t)level, api, 0, 0);
	}
	ft_capture_pop(level);
	return level;
}

static ft_nvtx_range_id start(uint32_t (*name_of)(const void *), const void *arg, unsigned api)
{
	ft_nvtx_range_id id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_RANGE_START, now, now, (uint32_t)id, (uint32_t)(id >> 32),
			   name_of(arg), api);
	}
	return id;
}

static void end(ft_nvtx_range_id id, unsigned api)
{
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_RANGE_END, now, now, (uint32_t)id, (uint32_t)(id >> 32), api, 0);
	}
}

static void mark(uint32_t (*name_of)(const void *), const void *arg, unsigned api)
{
	struct ft_thread *t = ft_enter(FT_G_PROC);
	if (t) {
		uint64_t now = ft_now();
		ft_record4(t, FT_EV_MARK, now, now, name_of(arg), api, 0, 0);
	}
	ft_capture_mark(text_of(name_of, arg));
}

static uint32_t of_ascii(const void *s) { return ft_intern(s); }
static uint32_t of_wide(const void *s) { return intern_wide(s); }
static uint32_t of_attr(const void *a) { return attr_name(a); }

/* ---- the NVTX slots ---- */

static void nvtx_mark_ex(const struct ft_nvtx_attr *a) { mark(of_attr, a, API_NVTX); }
static void nvtx_mark_a(const char *m) { mark(of_ascii, m, API_NVTX); }
static void nvtx_mark_w(const wchar_t *m) { mark(of_wide, m, API_NVTX); }
static ft_nvtx_range_id nvtx_start_ex(const struct ft_nvtx_attr *a) { return start(of_attr, a, API_NVTX); }
static ft_nvtx_range_id nvtx_start_a(const char *m) { return start(of_ascii, m, API_NVTX); }
static ft_nvtx_range_id nvtx_start_w(const wchar_t *m) { return start(of_wide, m, API_NVTX); }
static void nvtx_end(ft_nvtx_range_id id) { end(id, API_NVTX); }
static int nvtx_push_ex(const struct ft_nvtx_attr *a) { return push(of_attr, a, API_NVTX); }
static int nvtx_push_a(const char *m) { return push(of_ascii, m, API_NVTX); }
static int nvtx_push_w(const wchar_t *m) { return push(of_wide, m, API_NVTX); }
static int nvtx_pop(void) { return pop(API_NVTX); }

static void dom_mark_ex(ft_nvtx_domain d, const struct ft_nvtx_attr *a)
{
	(void)d;
	mark(of_attr, a, API_NVTX_DOMAIN);
}

static ft_nvtx_range_id dom_start_ex(ft_nvtx_domain d, const struct ft_nvtx_attr *a)
{
	(void)d;
	return start(of_attr, a, API_NVTX_DOMAIN);
}

static void dom_end(ft_nvtx_domain d, ft_nvtx_range_id id)
{
	(void)d;
	end(id, API_NVTX_DOMAIN);
}

static int dom_push_ex(ft_nvtx_domain d, const struct ft_nvtx_attr *a)
{
	(void)d;
	return push(of_attr, a, API_NVTX_DOMAIN);
}

static int dom_pop(ft_nvtx_domain d)
{
	(void)d;
	return pop(API_NVTX_DOMAIN);
}

/* A registered string's handle is its string id (NULL when the string
 * table is not up yet: the message then shows as no name). */
static const void *dom_register_a(ft_nvtx_domain d, const char *s)
{
	(void)d;
	return (const void *)(uintptr_t)ft_intern(s);
}

static const void *dom_register_w(ft_nvtx_domain d, const wchar_t *s)
{
	(void)d;
	return (const void *)(uintptr_t)intern_wide(s);
}

struct slot { unsigned id; ft_nvtx_fn fn; };
#define SLOT(id, f) { id, (ft_nvtx_fn)(void (*)(void))(f) }

static const struct slot core_slots[] = {
	SLOT(FT_NVTX_CBID_CORE_MarkEx, nvtx_mark_ex),
	SLOT(FT_NVTX_CBID_CORE_MarkA, nvtx_mark_a),
	SLOT(FT_NVTX_CBID_CORE_MarkW, nvtx_mark_w),
	SLOT(FT_NVTX_CBID_CORE_RangeStartEx, nvtx_start_ex),
	SLOT(FT_NVTX_CBID_CORE_RangeStartA, nvtx_start_a),
	SLOT(FT_NVTX_CBID_CORE_RangeStartW, nvtx_start_w),
	SLOT(FT_NVTX_CBID_CORE_RangeEnd, nvtx_end),
	SLOT(FT_NVTX_CBID_CORE_RangePushEx, nvtx_push_ex),
	SLOT(FT_NVTX_CBID_CORE_RangePushA, nvtx_push_a),
	SLOT(FT_NVTX_CBID_CORE_RangePushW, nvtx_push_w),
	SLOT(FT_NVTX_CBID_CORE_RangePop, nvtx_pop),
};

static const struct slot core2_slots[] = {
	SLOT(FT_NVTX_CBID_CORE2_DomainMarkEx, dom_mark_ex),
	SLOT(FT_NVTX_CBID_CORE2_DomainRangeStartEx, dom_start_ex),
	SLOT(FT_NVTX_CBID_CORE2_DomainRangeEnd, dom_end),
	SLOT(FT_NVTX_CBID_CORE2_DomainRangePushEx, dom_push_ex),
	SLOT(FT_NVTX_CBID_CORE2_DomainRangePop, dom_pop),
	SLOT(FT_NVTX_CBID_CORE2_DomainRegisterStringA, dom_register_a),
	SLOT(FT_NVTX_CBID_CORE2_DomainRegisterStringW, dom_register_w),
};

/* Fills the slots of one module the loader offers; 0 if it offers none. */
static int fill(const struct ft_nvtx_callbacks *cb, int module, const struct slot *s, size_t n)
{
	ft_nvtx_table table = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].id < size && table[s[i].id])
			*table[s[i].id] = s[i].fn;
	return 1;
}

/* every non-static function below is exported */
#pragma GCC visibility push(default)

int InitializeInjectionNvtx2(ft_nvtx_get_export_table get)
{
	if (!get)
		return 0;
	const struct ft_nvtx_callbacks *cb = get(FT_NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	const struct ft_nvtx_versioninfo *vi = get(FT_NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(2);
	int core = fill(cb, FT_NVTX_CB_MODULE_CORE, core_slots,
			sizeof core_slots / sizeof core_slots[0]);
	fill(cb, FT_NVTX_CB_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof core2_slots[0]);
	return core;
}

void feedtrace_range_push(const char *name)
{
	push(of_ascii, name, API_FEEDTRACE);
}

void feedtrace_range_pop(void)
{
	pop(API_FEEDTRACE);
}

void feedtrace_mark(const char *name)
{
	mark(of_ascii, name, API_FEEDTRACE);
}

#pragma GCC visibility pop
