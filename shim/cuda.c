/*
 * cuda.c: binds the generated CUDA wrappers to driver functions, whichever
 * way the program reached the driver (linked, dlsym, cuGetProcAddress), and
 * records what a wrapped call did. A wrapper always calls exactly the
 * function the driver handed out; a driver answer we cannot match to a
 * wrapper is passed on untouched. Kernel names are looked up once per
 * function handle; whether a copy's host memory is page-locked is asked of
 * the driver itself (cuPointerGetAttribute).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "../libfeedtrace/callsite.h"
#include "cuda_shim.h"
#include "../libfeedtrace/dlreal.h"


static CUresult (*drv_func_get_name)(const char **, CUfunction);
static CUresult (*drv_kernel_get_name)(const char **, CUkernel);
static CUresult (*drv_pointer_attr)(void *, int, CUdeviceptr);
static CUresult (*drv_array_desc)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
static void *driver_handle;
static _Atomic int driver_state;                 /* 0 unknown, 1 learning, 2 known */
static _Atomic uint64_t unmatched;               /* driver answers passed on unwrapped */

/* fork child: a thread of the parent that was learning the driver did not
 * come along; the child learns again rather than wait for it for ever. */
void ft_cuda_fork_child(void)
{
	int learning = 1;
	atomic_compare_exchange_strong(&driver_state, &learning, 0);
}

/* Learns the driver once, from any function inside it: its handle, the
 * address of each wrapped export, and the helpers the records need. */
static void driver_learn(void *fn_in_driver)
{
	int expect = 0;
	if (atomic_load(&driver_state) == 2)
		return;
	if (!atomic_compare_exchange_strong(&driver_state, &expect, 1)) {
		while (atomic_load(&driver_state) != 2)
			;
		return;
	}
	Dl_info info;
	void *h = NULL;
	if (dladdr(fn_in_driver, &info) && info.dli_fname)
		h = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
	if (h) {
		driver_handle = h;
		if (!ft_real_dlsym)
			ft_dl_boot();
		for (int i = 0; i < ft_cu_count; i++)
			ft_cu_table[i].driver_addr = ft_real_dlsym(h, ft_cu_table[i].sym);
		drv_func_get_name = (CUresult (*)(const char **, CUfunction))
			ft_real_dlsym(h, "cuFuncGetName");
		drv_kernel_get_name = (CUresult (*)(const char **, CUkernel))
			ft_real_dlsym(h, "cuKernelGetName");
		drv_pointer_attr = (CUresult (*)(void *, int, CUdeviceptr))
			ft_real_dlsym(h, "cuPointerGetAttribute");
		drv_array_desc = (CUresult (*)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray))
			ft_real_dlsym(h, "cuArray3DGetDescriptor_v2");
	}
	ft_callsite_init();             /* a Python that loaded CUDA late */
	atomic_store(&driver_state, 2);
}

static int is_wrapper(void *p)
{
	for (int i = 0; i < ft_cu_count; i++)
		if (ft_cu_table[i].wrapper == p)
			return 1;
	return 0;
}

int ft_cu_is_wrapper(void *p)
{
	return is_wrapper(p);
}

/* Entry i now calls p; returns the wrapper, or p if i already calls another.
 * A driver that hands out our own wrapper (its exports are interposed by
 * ours) gets it back unchanged: that wrapper finds its real function itself. */
static void *bind_entry(int i, void *p)
{
	if (is_wrapper(p))
		return p;
	void *expect = NULL;
	if (atomic_compare_exchange_strong(&ft_cu_table[i].real, &expect, p) || expect == p)
		return ft_cu_table[i].wrapper;
	atomic_fetch_add(&unmatched, 1);
	return p;
}

/* A wrapper called with no driver function bound: the program linked
 * against libcuda (the next definition of the symbol), or the driver,
 * loaded RTLD_LOCAL, handed out our wrapper for its own export. */
void *ft_cu_resolve(int idx)
{
	if (!ft_real_dlsym)
		ft_dl_boot();
	void *p = ft_real_dlsym(RTLD_NEXT, ft_cu_table[idx].sym);
	if ((!p || is_wrapper(p)) && strncmp(ft_cu_table[idx].sym, "nccl", 4) != 0) {
		void *h = driver_handle ? driver_handle
					: dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
		p = h ? ft_real_dlsym(h, ft_cu_table[idx].sym) : NULL;
	}
	if (!p || is_wrapper(p))
		return NULL;
	if (strncmp(ft_cu_table[idx].sym, "nccl", 4) != 0)
		driver_learn(p);
	void *expect = NULL;
	atomic_compare_exchange_strong(&ft_cu_table[idx].real, &expect, p);
	return atomic_load(&ft_cu_table[idx].real);
}

void *ft_cu_bind_proc(const char *symbol, void *pfn, int version, uint64_t flags)
{
	int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	int exact = -1, best = -1;
	driver_learn(pfn);
	for (int i = 0; i < ft_cu_count; i++) {
		const struct ft_cu_entry *e = &ft_cu_table[i];
		if (strcmp(e->api, symbol) != 0)
			continue;
		if (e->driver_addr == pfn) {
			exact = i;
			break;
		}
		/* fallback when the driver answers with an unexported address:
		 * the newest variant at or below the asked version */
		if (e->since <= version && e->ptsz == want_ptsz &&
		    (best < 0 || e->since > ft_cu_table[best].since))
			best = i;
	}
	if (exact >= 0)
		return bind_entry(exact, pfn);
	if (best >= 0)
		return bind_entry(best, pfn);
	return pfn;
}

/* dlsym/dlvsym of a cu* name: wrap it if it is a driver export we wrap. */
void *ft_cu_bind_dlsym(const char *name, void *p)
{
	Dl_info info;
	if (!dladdr(p, &info) || !info.dli_fname)
		return p;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (strncmp(base, "libnccl.so", 10) == 0 && strncmp(name, "nccl", 4) == 0) {
		for (int i = 0; i < ft_cu_count; i++)
			if (strcmp(ft_cu_table[i].sym, name) == 0)
				return bind_entry(i, p);
		return p;
	}
	if (strncmp(base, "libcuda.so", 10) != 0)
		return p;
	driver_learn(p);
	for (int i = 0; i < ft_cu_count; i++)
		if (strcmp(ft_cu_table[i].sym, name) == 0)
			return bind_entry(i, p);
	return p;
}

/* ---- record helpers ---- */

uint32_t ft_cu_sym_id_slow(int idx)
{
	uint32_t id = ft_intern(ft_cu_table[idx].sym);
	atomic_store_explicit(&ft_cu_table[idx].sym_id, id, memory_order_relaxed);
	return id;
}

#define NAME_SLOTS 16384u
static struct {
	_Atomic uint64_t key;
	_Atomic uint32_t id;                  /* UINT32_MAX: no name */
} names[NAME_SLOTS];

static uint32_t lookup_name(CUfunction f)
{
	const char *s = NULL;
	if (drv_func_get_name && drv_func_get_name(&s, f) == CUDA_SUCCESS && s)
		return ft_intern(s);
	if (drv_kernel_get_name && drv_kernel_get_name(&s, (CUkernel)f) == CUDA_SUCCESS && s)
		return ft_intern(s);
	return 0;
}

/* Kernel name id of a function handle, asked of the driver once. */
uint32_t ft_cu_kernel_name(CUfunction f)
{
	uint64_t k = (uint64_t)(uintptr_t)f;
	if (!k)
		return 0;
	uint32_t h = (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 50);
	for (uint32_t probe = 0; probe < 32; probe++) {
		__typeof__(&names[0]) slot = &names[(h + probe) & (NAME_SLOTS - 1)];
		uint64_t cur = atomic_load_explicit(&slot->key, memory_order_acquire);
		if (cur == k) {
			uint32_t id = atomic_load_explicit(&slot->id, memory_order_acquire);
			if (id)
				return id == UINT32_MAX ? 0 : id;
			return lookup_name(f);          /* another thread is filling it */
		}
		if (cur == 0) {
			uint64_t expect = 0;
			if (atomic_compare_exchange_strong(&slot->key, &expect, k)) {
				uint32_t id = lookup_name(f);
				atomic_store_explicit(&slot->id, id ? id : UINT32_MAX,
						      memory_order_release);
				return id;
			}
			if (expect == k)
				return lookup_name(f);
		}
	}
	return lookup_name(f);
}

/* 1: every host-side pointer is known to the driver (page-locked, or device
 * memory); 0: at least one is pageable; -1: cannot tell. */
static int host_pinned(uint64_t p1, uint64_t p2, int nptrs)
{
	if (nptrs == 0 || !drv_pointer_attr)
		return -1;
	uint64_t ptrs[2] = { p1, p2 };
	for (int i = 0; i < nptrs; i++) {
		unsigned int type = 0;
		if (drv_pointer_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     (CUdeviceptr)ptrs[i]) != CUDA_SUCCESS)
			return 0;
	}
	return 1;
}

/* Waits and hidden syncs carry their call site; submissions never pay for it. */
static inline void callsite(struct ft_thread *t, unsigned sync, uint32_t site[2])
{
	if (sync == FT_CU_WAIT || sync == FT_CU_HIDDEN) {
		FT_BUSY_WALK(t);        /* what the unwinder calls is not the program's */
		site[0] = ft_callsite_native();
		site[1] = ft_callsite_python();
		t->busy = 0;
	} else {
		site[0] = site[1] = 0;
	}
}


/* ft_cu_launch: inline in the wrappers (cuda_shim.h) */

void ft_cu_handle(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		  CUresult r, unsigned sync, uint64_t stream, uint64_t handle)
{
	uint64_t t1 = ft_now();
	uint32_t sym = ft_cu_sym_id(idx), site[2];
	callsite(t, sync, site);
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_cu_head(rec, kind, t0, t1, r, sym, sync, 0);
	uint64_t *x = (uint64_t *)ft_slot(t, 1);
	x[0] = ft_cu_stream_of(ptsz, stream);
	x[1] = handle;
	((uint32_t *)x)[4] = site[0];
	((uint32_t *)x)[5] = site[1];
	x[3] = 0;
	ft_commit(t, 2);
}

/* The record of a copy that ended at t1, its host memory checked. */
static void copy_record(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
			uint64_t t1, CUresult r, unsigned dir, int async, uint64_t stream,
			uint64_t bytes, int pinned)
{
	uint32_t sym = ft_cu_sym_id(idx);
	unsigned sync;
	if (dir == 3)
		sync = FT_CU_SUBMIT;           /* device to device: the host never waits */
	else if (!async)
		sync = FT_CU_HIDDEN;           /* synchronous copy or memset */
	else
		sync = pinned == 0 ? FT_CU_HIDDEN : FT_CU_SUBMIT;   /* pageable: staged, waits */
	uint32_t site[2];
	callsite(t, sync, site);
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_cu_head(rec, kind, t0, t1, r, sym, dir, sync);
	uint32_t *x = (uint32_t *)ft_slot(t, 1);
	uint64_t s64 = ft_cu_stream_of(ptsz, stream);
	memcpy(&x[0], &s64, 8);
	memcpy(&x[2], &bytes, 8);
	x[4] = (uint32_t)pinned;
	x[5] = site[0];
	x[6] = site[1];
	x[7] = 0;
	ft_commit(t, 2);
}

void ft_cu_copy(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		CUresult r, unsigned dir, int async, uint64_t stream, uint64_t bytes,
		uint64_t p1, uint64_t p2, int nptrs)
{
	uint64_t t1 = ft_now();
	copy_record(t, kind, idx, ptsz, t0, t1, r, dir, async, stream, bytes,
		    host_pinned(p1, p2, nptrs));
}

void ft_cu_mem(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
	       CUresult r, unsigned sync, uint64_t stream, uint64_t ptr, uint64_t bytes)
{
	uint64_t t1 = ft_now();
	uint32_t sym = ft_cu_sym_id(idx), site[2];
	callsite(t, sync, site);
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_cu_head(rec, kind, t0, t1, r, sym, sync, 0);
	uint64_t *x = (uint64_t *)ft_slot(t, 1);
	x[0] = ft_cu_stream_of(ptsz, stream);
	x[1] = ptr;
	x[2] = bytes;
	((uint32_t *)x)[6] = site[0];
	((uint32_t *)x)[7] = site[1];
	ft_commit(t, 2);
}

/* NCCL datatypes (nccl.h): int8, uint8, int32, uint32, int64, uint64,
 * float16, float32, float64, bfloat16, fp8 e4m3, fp8 e5m2 */
static uint64_t nccl_type_size(int dtype)
{
	static const unsigned char size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return dtype >= 0 && dtype < (int)sizeof size ? size[dtype] : 0;
}

void ft_cu_nccl(struct ft_thread *t, unsigned kind, int idx, uint64_t t0, CUresult r,
		unsigned sync, uint64_t stream, uint64_t count, int dtype, int peer, uint64_t comm)
{
	uint64_t t1 = ft_now();
	uint32_t sym = ft_cu_sym_id(idx);
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_cu_head(rec, kind, t0, t1, r, sym, sync, 0);
	uint32_t *x = (uint32_t *)ft_slot(t, 1);
	uint64_t bytes = count * nccl_type_size(dtype);
	memcpy(&x[0], &stream, 8);
	memcpy(&x[2], &bytes, 8);
	x[4] = (uint32_t)peer;
	x[5] = 0;
	memcpy(&x[6], &comm, 8);
	ft_commit(t, 2);
}

/* The descriptor offsets read below are asserted, against cuda_types.h
 * and against cuda.h, from one list (scripts/gen_cuda.py, STRUCT_OFFSETS). */

/* A side of a 2-D/3-D copy, read from its memory-type field onwards (the
 * host pointer and the device pointer follow it in both descriptors). */
static void read_side(const CUmemorytype *type, CUmemorytype *kind, uint64_t *host)
{
	size_t to_host = offsetof(CUDA_MEMCPY2D, srcHost) - offsetof(CUDA_MEMCPY2D, srcMemoryType);
	size_t to_dev = offsetof(CUDA_MEMCPY2D, srcDevice) - offsetof(CUDA_MEMCPY2D, srcMemoryType);
	*kind = *type;
	if (*kind == 1)
		memcpy(host, (const char *)type + to_host, sizeof(void *));
	else if (*kind == 4)
		memcpy(host, (const char *)type + to_dev, sizeof(CUdeviceptr));
	else
		*host = 0;
}

void ft_cu_copy_struct(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		       CUresult r, int async, uint64_t stream, const CUmemorytype *src,
		       const CUmemorytype *dst, uint64_t bytes, unsigned dd_dir)
{
	CUmemorytype sk = 0, dk = 0;
	uint64_t sp = 0, dp = 0;
	if (src && dst) {
		read_side(src, &sk, &sp);
		read_side(dst, &dk, &dp);
	}
	/* 1 HtoD, 2 DtoH, dd_dir (3, or 4 for a peer copy) DtoD (arrays count as
	 * device), 0 otherwise */
	int s_host = sk == 1, d_host = dk == 1;
	unsigned dir = s_host && !d_host && dk ? 1 : !s_host && sk && d_host ? 2
		     : sk && dk && sk != 1 && dk != 1 && sk != 4 && dk != 4 ? dd_dir : 0;
	uint64_t p[2];
	int n = 0;
	if (sp)
		p[n++] = sp;
	if (dp)
		p[n++] = dp;
	ft_cu_copy(t, kind, idx, ptsz, t0, r, dir, async, stream, bytes,
		   n > 0 ? p[0] : 0, n > 1 ? p[1] : 0, n);
}

/* ---- batch copies ---- */

/* 1: p is known to the driver (page-locked host or device memory) */
static int known_to_driver(uint64_t p)
{
	unsigned int type = 0;
	return drv_pointer_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) ==
	       CUDA_SUCCESS;
}

void ft_cu_copy_batch(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		      CUresult r, uint64_t stream, const CUdeviceptr *dsts,
		      const CUdeviceptr *srcs, const size_t *sizes, size_t count)
{
	uint64_t t1 = ft_now();
	uint64_t bytes = 0;
	int pinned = -1;
	/* the arrays are read only when the driver accepted them: a refused
	 * call may have been refused for pointing at nothing */
	if (r == CUDA_SUCCESS && dsts && srcs && sizes) {
		pinned = count && drv_pointer_attr ? 1 : -1;
		for (size_t i = 0; i < count; i++) {
			bytes += sizes[i];
			if (pinned == 1 && (!known_to_driver(dsts[i]) || !known_to_driver(srcs[i])))
				pinned = 0;
		}
	}
	copy_record(t, kind, idx, ptsz, t0, t1, r, 0, 1, stream, bytes, pinned);
}

/* Bytes of one element of a CUDA array: NumChannels values of its format;
 * a format not listed here (packed, compressed) counts 1 byte a value. */
static uint64_t array_elem_bytes(CUarray a)
{
	static const struct { int format; unsigned char bytes; } sizes[] = {
		{ 0x01, 1 }, { 0x02, 2 }, { 0x03, 4 },          /* unsigned 8, 16, 32 */
		{ 0x08, 1 }, { 0x09, 2 }, { 0x0a, 4 },          /* signed 8, 16, 32 */
		{ 0x10, 2 }, { 0x20, 4 },                       /* half, float */
	};
	CUDA_ARRAY3D_DESCRIPTOR d;
	if (!drv_array_desc || drv_array_desc(&d, a) != CUDA_SUCCESS)
		return 1;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (sizes[i].format == d.Format)
			return (uint64_t)sizes[i].bytes * (d.NumChannels ? d.NumChannels : 1);
	return d.NumChannels ? d.NumChannels : 1;
}

void ft_cu_copy_batch3d(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
			CUresult r, uint64_t stream, const CUDA_MEMCPY3D_BATCH_OP *ops,
			size_t n)
{
	uint64_t t1 = ft_now();
	uint64_t bytes = 0;
	int pinned = drv_pointer_attr ? 1 : -1, npointers = 0;
	for (size_t i = 0; r == CUDA_SUCCESS && ops && i < n; i++) {   /* as above */
		const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
		/* extents are in elements: 1 byte between pointers, else the array's */
		uint64_t elem = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ?
					array_elem_bytes(op->src.op.array.array)
				: op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ?
					array_elem_bytes(op->dst.op.array.array) : 1;
		bytes += (uint64_t)op->extent.width * op->extent.height * op->extent.depth * elem;
		const CUmemcpy3DOperand *side[2] = { &op->src, &op->dst };
		for (int k = 0; k < 2; k++) {
			if (side[k]->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
				continue;
			npointers++;
			if (pinned == 1 && !known_to_driver(side[k]->op.ptr.ptr))
				pinned = 0;
		}
	}
	copy_record(t, kind, idx, ptsz, t0, t1, r, 0, 1, stream, bytes, npointers ? pinned : -1);
}
