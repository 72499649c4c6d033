/*
 * fake_nccl.c: a stand-in libnccl.so.2 for tests (a test double): the
 * collectives feedtrace wraps, returning ncclSuccess. On a communicator
 * made by its ncclCommInitRank, a collective really waits for every rank:
 * the ranks are processes of one machine meeting at a barrier in shared
 * memory (named by the unique id's bytes, a POSIX shared-memory name), so
 * a late rank makes the others wait inside the call, as a real job's
 * ranks wait at the next all-reduce. On any other handle (a test's made-up
 * pointer) a collective returns at once.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct ncclComm *ncclComm_t;
typedef void *cudaStream_t;
typedef struct { char internal[128]; } ncclUniqueId;

enum { ncclSuccess = 0, ncclInvalidArgument = 4, ncclSystemError = 2 };

struct shared {                     /* one per communicator, in shared memory */
	uint32_t arrived, gen;
};

struct ncclComm {
	uint32_t magic;
	int nranks, rank;
	struct shared *sh;
};
#define MAGIC 0x6e63636cu

/* the communicators made here: a collective on any other handle returns */
static struct ncclComm *made[16];

static struct ncclComm *ours(ncclComm_t c)
{
	for (int i = 0; i < 16; i++)
		if (made[i] && made[i] == c)
			return c;
	return NULL;
}

/* every rank of c arrives before any leaves (a futex on the generation) */
static void barrier(struct ncclComm *c)
{
	struct shared *s = c->sh;
	uint32_t g = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&s->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)c->nranks) {
		__atomic_store_n(&s->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return;
	}
	while (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) == g)
		syscall(SYS_futex, &s->gen, FUTEX_WAIT, g, NULL, NULL, 0);
}

static int collective(ncclComm_t comm)
{
	struct ncclComm *c = ours(comm);
	if (c)
		barrier(c);
	return ncclSuccess;
}

/* the id is the shared memory's name: the caller's, or one of this process */
int ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof *id);
	snprintf(id->internal, sizeof id->internal, "/fake-nccl-%d", (int)getpid());
	return ncclSuccess;
}

int ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	if (!comm || nranks < 1 || rank < 0 || rank >= nranks || id.internal[0] != '/')
		return ncclInvalidArgument;
	id.internal[sizeof id.internal - 1] = 0;
	int fd = shm_open(id.internal, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return ncclSystemError;
	/* every rank sizes it the same: the first one's zeros stay */
	if (ftruncate(fd, sizeof(struct shared)) != 0) {
		close(fd);
		return ncclSystemError;
	}
	void *m = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return ncclSystemError;
	struct ncclComm *c = calloc(1, sizeof *c);
	if (!c)
		return ncclSystemError;
	*c = (struct ncclComm){ MAGIC, nranks, rank, m };
	for (int i = 0; i < 16; i++)
		if (!made[i]) {
			made[i] = c;
			break;
		}
	barrier(c);                     /* every rank joined */
	*comm = c;
	return ncclSuccess;
}

int ncclCommDestroy(ncclComm_t comm)
{
	struct ncclComm *c = ours(comm);
	if (!c)
		return ncclInvalidArgument;
	for (int i = 0; i < 16; i++)
		if (made[i] == c)
			made[i] = NULL;
	munmap(c->sh, sizeof *c->sh);
	free(c);
	return ncclSuccess;
}

int ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)op; (void)st; return collective(c); }
int ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)root; (void)st; return collective(c); }
int ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)st; return collective(c); }
int ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)op; (void)st; return collective(c); }
int ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)n; (void)t; (void)peer; (void)c; (void)st; return 0; }
int ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st)
{ (void)r; (void)n; (void)t; (void)peer; (void)c; (void)st; return 0; }
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }
