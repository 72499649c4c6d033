/*
 * evfacts.c: what the analyses and the converter need to know of each
 * event kind, worked out once from events.def's field tables: its
 * category of time, whether it reads, launches, opens, waits for data,
 * and where its fields are. One table for every analysis (analyses.h).
 */
#include <string.h>

#include "analyses.h"
#include "events.h"

const char *ft_sync_word(unsigned s)
{
	static const char *const w[] = { "submit", "wait", "hidden sync", "poll", "other" };
	return s < 5 ? w[s] : "unknown";
}

const char *ft_dir_word(unsigned d)
{
	static const char *const w[] = { "unified", "HtoD", "DtoH", "DtoD", "peer", "memset" };
	return d < 6 ? w[d] : "unknown";
}

struct ft_kfacts ft_kf[FT_EV_COUNT];
int ft_kf_built;

void ft_kfacts_build(void)
{
	for (unsigned k = 1; k < FT_EV_COUNT; k++) {
		const struct ft_kind_info *ki = ft_kind(k);
		struct ft_kfacts *f = &ft_kf[k];
#define FT_KF_FIND(name) f->name = ft_kind_field(ki, #name);
		FT_KF_FIELDS(FT_KF_FIND)
#undef FT_KF_FIND
		f->cuda = ki->group == FT_G_CUDA && f->sync;
		switch (ki->group) {
		case FT_G_IO: f->cat = FT_CAT_IO; break;
		case FT_G_LOCK: f->cat = FT_CAT_LOCK; break;
		case FT_G_CUDA: f->cat = FT_CAT_SUBMIT; break;
		default: f->cat = FT_CAT_CPU; break;
		}
		f->read = f->req && f->ret && ki->group == FT_G_IO;
		f->mutex = f->lock != NULL;       /* mutex and rwlock records carry "lock" */
		/* waiting for another thread or process to deliver: semaphores,
		 * condition variables (signalled by a producer), multiplexed waits,
		 * reads of pipes and sockets */
		if ((k >= FT_EV_COND_WAIT && k <= FT_EV_SEM_CLOCKWAIT)) {
			f->cat = FT_CAT_DATA;
			f->got = 2;
		}
		if (k >= FT_EV_POLL && k <= FT_EV_PIPE_READ) {
			f->cat = FT_CAT_DATA;
			f->got = 1;
		}
		if (k == FT_EV_FD_NEW || k == FT_EV_PIPE_WRITE)
			f->cat = FT_CAT_CPU;    /* a producer handing over: not a lock */
		f->open = (k >= FT_EV_OPEN && k <= FT_EV_OPEN64_2) || k == FT_EV_CREAT ||
			  k == FT_EV_FOPEN || k == FT_EV_FOPEN64;
		f->sem = k >= FT_EV_SEM_WAIT && k <= FT_EV_SEM_CLOCKWAIT;
		f->uring = k == FT_EV_IO_URING_SETUP;
		f->coll = k == FT_EV_NCCL_ALL_REDUCE || k == FT_EV_NCCL_BROADCAST ||
			  k == FT_EV_NCCL_ALL_GATHER || k == FT_EV_NCCL_REDUCE_SCATTER;
		/* a gloo collective runs on its thread: the call is the wait */
		if (k >= FT_EV_GLOO_ALLREDUCE && k <= FT_EV_GLOO_BARRIER) {
			f->coll = 2;
			f->cat = FT_CAT_RANKS;
		}
		f->launch = k == FT_EV_CU_LAUNCH_KERNEL || k == FT_EV_CU_LAUNCH_KERNEL_EX ||
			    k == FT_EV_CU_LAUNCH_COOP || k == FT_EV_CU_GRAPH_LAUNCH;
	}
	ft_kf_built = 1;
}


void ft_an_role_count(const struct ft_rec *r, uint64_t *launches, uint64_t *batches)
{
	const struct ft_kfacts *f = ft_kfacts(r->kind);
	if (!f)
		return;
	*launches += f->launch != 0;
	*batches += ft_kf_got_data(f, r);
}

int32_t ft_an_forked(const struct ft_rec *r)
{
	const struct ft_kfacts *f = ft_kfacts(r->kind);
	int64_t child = f && f->child ? ft_field_signed(r, f->child) : 0;
	return child > 0 && child <= INT32_MAX ? (int32_t)child : 0;
}

void ft_an_info(const struct ft_rec *r, struct ft_evinfo *o)
{
	ft_evinfo_of(ft_kfacts(r->kind), r, o);
}

