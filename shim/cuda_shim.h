/*
 * cuda_shim.h: what the generated CUDA wrappers (build/gen/cuda_wrappers.c,
 * from shim/cuda.tsv) share with shim/cuda.c: the wrapper table, the
 * lazy real-pointer accessor, and the record helpers, one per shape.
 */
#ifndef FT_CUDA_SHIM_H
#define FT_CUDA_SHIM_H

#include <stdatomic.h>
#include <stdint.h>

#include "cuda_types.h"
#include "gpu_time.h"
#include "../libfeedtrace/recorder.h"

struct ft_cu_entry {
	const char *sym;            /* exact driver export */
	const char *api;            /* name the program asked for */
	int since;                  /* CUDA version of this ABI variant */
	int ptsz;                   /* per-thread default stream variant */
	void *wrapper;
	_Atomic(void *) real;       /* the driver function this wrapper calls */
	void *driver_addr;          /* the driver's export of sym, once known */
	_Atomic uint32_t sym_id;    /* interned sym, 0 until first record */
};

extern struct ft_cu_entry ft_cu_table[];
extern const int ft_cu_count;

void ft_cuda_fork_child(void);  /* a fork child: the wrappers' per-process state */
void *ft_cu_resolve(int idx);  /* linked directly: the next definition of sym */

static inline void *ft_cu_real(int idx)
{
	void *p = atomic_load_explicit(&ft_cu_table[idx].real, memory_order_acquire);
	return ft_likely(p != NULL) ? p : ft_cu_resolve(idx);
}

/* dlsym of a driver symbol (dl.c): the wrapper to hand out for p, the
 * driver's function; and whether p is one of ours already */
void *ft_cu_bind_dlsym(const char *name, void *p);
int ft_cu_is_wrapper(void *p);
/* cuGetProcAddress: the wrapper to hand out for the driver's answer */
void *ft_cu_bind_proc(const char *symbol, void *pfn, int version, uint64_t flags);

/* sync classes (events.def) */
enum { FT_CU_SUBMIT = 0, FT_CU_WAIT = 1, FT_CU_HIDDEN = 2, FT_CU_POLL = 3, FT_CU_OTHER = 4 };

uint32_t ft_cu_sym_id_slow(int idx);    /* interns entry idx's symbol (first record) */
uint32_t ft_cu_kernel_name(CUfunction f);  /* kernel name id, asked of the driver once */

static inline uint32_t ft_cu_sym_id(int idx)
{
	uint32_t id = atomic_load_explicit(&ft_cu_table[idx].sym_id, memory_order_relaxed);
	return ft_likely(id != 0) ? id : ft_cu_sym_id_slow(idx);
}

/* a call's stream as recorded: the per-thread default stream is 2
 * (CU_STREAM_PER_THREAD) for a _ptsz entry point given stream 0 */
static inline uint64_t ft_cu_stream_of(int ptsz, uint64_t s)
{
	return ptsz && s == 0 ? 2 : s;
}

/* the first slot of every two-slot CUDA record (events.def): the result,
 * the entry point's symbol, then two words of the kind's own */
static inline void ft_cu_head(struct ft_rec *r, unsigned kind, uint64_t t0, uint64_t t1,
			      CUresult res, uint32_t sym, uint32_t w2, uint32_t w3)
{
	ft_rec_header(r, kind, 2, t0, t1);
	r->p.u32[0] = (uint32_t)res;
	r->p.u32[1] = sym;
	r->p.u32[2] = w2;
	r->p.u32[3] = w3;
}

/* A launch's record, inline in its wrapper (the hottest CUDA call: a
 * helper of 14 arguments cost the call as much as the record): two slots,
 * the head as every CUDA record's, then the stream and the grid. */
static inline __attribute__((always_inline)) void
ft_cu_launch(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0, CUresult r,
	     CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	     unsigned bz, CUstream s)
{
	uint64_t t1 = ft_now();
	uint32_t sym = ft_cu_sym_id(idx), name = ft_cu_kernel_name(f);
	struct ft_rec *rec = ft_reserve(t, 2);
	if (!rec)
		return;
	ft_cu_head(rec, kind, t0, t1, r, sym, name, FT_CU_SUBMIT);
	uint64_t *x = (uint64_t *)ft_slot(t, 1);
	x[0] = ft_cu_stream_of(ptsz, (uint64_t)(uintptr_t)s);
	uint32_t *w = (uint32_t *)(x + 1);
	w[0] = gx; w[1] = gy; w[2] = gz; w[3] = bx; w[4] = by; w[5] = bz;
	ft_commit(t, 2);
}
void ft_cu_handle(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		  CUresult r, unsigned sync, uint64_t stream, uint64_t handle);
void ft_cu_copy(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		CUresult r, unsigned dir, int async, uint64_t stream, uint64_t bytes,
		uint64_t p1, uint64_t p2, int nptrs);
void ft_cu_mem(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
	       CUresult r, unsigned sync, uint64_t stream, uint64_t ptr, uint64_t bytes);

/* 2-D/3-D copies: each side is described by its memory type, followed in
 * the descriptor by the host pointer and the device pointer. */
struct ft_cu_side {
	CUmemorytype type;
	const void *host;
	CUdeviceptr device;
};
/* dd_dir: the direction of a copy between device memory or arrays (3, or
 * 4 for cuMemcpy3DPeer) */
void ft_cu_copy_struct(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		       CUresult r, int async, uint64_t stream, const CUmemorytype *src,
		       const CUmemorytype *dst, uint64_t bytes, unsigned dd_dir);
/* batch copies: one record for the batch, bytes of all its copies */
void ft_cu_copy_batch(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
		      CUresult r, uint64_t stream, const CUdeviceptr *dsts,
		      const CUdeviceptr *srcs, const size_t *sizes, size_t count);
void ft_cu_copy_batch3d(struct ft_thread *t, unsigned kind, int idx, int ptsz, uint64_t t0,
			CUresult r, uint64_t stream, const CUDA_MEMCPY3D_BATCH_OP *ops,
			size_t n);
/* comm: the communicator (its handle; 0 for a group's end) */
void ft_cu_nccl(struct ft_thread *t, unsigned kind, int idx, uint64_t t0, CUresult r,
		unsigned sync, uint64_t stream, uint64_t count, int dtype, int peer, uint64_t comm);


#endif
