/*
 * fake_nccl.c: a stand-in libnccl.so.2 for tests (a test double): the
 * collectives feedtrace wraps, doing nothing and returning ncclSuccess.
 */
#include <stddef.h>

typedef struct ncclComm *ncclComm_t;
typedef void *cudaStream_t;

int ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)op; (void)c; (void)st; return 0; }
int ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)root; (void)c; (void)st; return 0; }
int ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)c; (void)st; return 0; }
int ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)r; (void)n; (void)t; (void)op; (void)c; (void)st; return 0; }
int ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st)
{ (void)s; (void)n; (void)t; (void)peer; (void)c; (void)st; return 0; }
int ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st)
{ (void)r; (void)n; (void)t; (void)peer; (void)c; (void)st; return 0; }
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }
