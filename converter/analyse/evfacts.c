/*
 * evfacts.c: what the analyses and the converter need to know of each
 * event kind, worked out once from events.def's classes and field tables:
 * its category of time, whether it reads, launches, opens, waits for data,
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
		/* by the kind's class (events.def): waiting for another thread or
		 * process to deliver are semaphores, condition variables
		 * (signalled by a producer), multiplexed waits, reads of pipes
		 * and sockets; a producer handing over is not a lock; a gloo
		 * collective runs on its thread: the call is the wait */
		switch (ki->cls) {
		case FT_K_FILE: case FT_K_URING: f->cat = FT_CAT_IO; break;
		case FT_K_OPEN: f->cat = FT_CAT_IO; f->open = 1; break;
		case FT_K_READ: f->cat = FT_CAT_IO; f->read = 1; break;
		case FT_K_LOCK: f->cat = FT_CAT_LOCK; f->mutex = 1; break;
		case FT_K_DATA_WAIT: f->cat = FT_CAT_DATA; f->got = 1; break;
		case FT_K_COND: f->cat = FT_CAT_DATA; f->got = 2; break;
		case FT_K_SEM: f->cat = FT_CAT_DATA; f->got = 2; f->sem = 1; break;
		case FT_K_CUDA: f->cat = FT_CAT_SUBMIT; break;
		case FT_K_LAUNCH: f->cat = FT_CAT_SUBMIT; f->launch = 1; break;
		case FT_K_COLLECTIVE: f->cat = FT_CAT_SUBMIT; f->coll = 1; break;
		case FT_K_GLOO: f->cat = FT_CAT_RANKS; f->coll = 2; break;
		default: f->cat = FT_CAT_CPU; break;    /* HANDOVER, PROCESS, RANGE */
		}
		f->uring = ki->cls == FT_K_URING;
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

