/*
 * nccl_prog.c MODE: calls NCCL collectives, linked (MODE=link) or through
 * dlopen("libnccl.so.2") + dlsym (MODE=dlsym): 3 AllReduce of 1024 floats,
 * 1 Broadcast of 256 doubles from root 1, 1 AllGather of 100 bytes,
 * 1 ReduceScatter of 64 half floats, 2 Send + 2 Recv of 10 int32 with
 * peer 3, inside one group (1 GroupEnd).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*coll_t)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*gather_t)(const void *, void *, size_t, int, void *, void *);
typedef int (*p2p_t)(const void *, size_t, int, int, void *, void *);
typedef int (*group_t)(void);

int ncclAllReduce(const void *, void *, size_t, int, int, void *, void *);
int ncclBroadcast(const void *, void *, size_t, int, int, void *, void *);
int ncclAllGather(const void *, void *, size_t, int, void *, void *);
int ncclReduceScatter(const void *, void *, size_t, int, int, void *, void *);
int ncclSend(const void *, size_t, int, int, void *, void *);
int ncclRecv(void *, size_t, int, int, void *, void *);
int ncclGroupStart(void);
int ncclGroupEnd(void);

int main(int argc, char **argv)
{
	coll_t allreduce = ncclAllReduce, bcast = ncclBroadcast, rscatter = ncclReduceScatter;
	gather_t gather = ncclAllGather;
	p2p_t send = ncclSend, recv = (p2p_t)ncclRecv;
	group_t gstart = ncclGroupStart, gend = ncclGroupEnd;
	if (argc > 1 && strcmp(argv[1], "dlsym") == 0) {
		void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return 2;
		allreduce = (coll_t)dlsym(h, "ncclAllReduce");
		bcast = (coll_t)dlsym(h, "ncclBroadcast");
		rscatter = (coll_t)dlsym(h, "ncclReduceScatter");
		gather = (gather_t)dlsym(h, "ncclAllGather");
		send = (p2p_t)dlsym(h, "ncclSend");
		recv = (p2p_t)dlsym(h, "ncclRecv");
		gstart = (group_t)dlsym(h, "ncclGroupStart");
		gend = (group_t)dlsym(h, "ncclGroupEnd");
	}
	int bad = 0;
	void *comm = (void *)0x1234, *stream = (void *)0x5678;
	char buf[8192];
	for (int i = 0; i < 3; i++)
		bad |= allreduce(buf, buf, 1024, 7, 0, comm, stream);
	bad |= bcast(buf, buf, 256, 8, 1, comm, stream);
	bad |= gather(buf, buf, 100, 0, comm, stream);
	bad |= rscatter(buf, buf, 64, 6, 0, comm, stream);
	bad |= gstart();
	for (int i = 0; i < 2; i++) {
		bad |= send(buf, 10, 2, 3, comm, stream);
		bad |= recv(buf, 10, 2, 3, comm, stream);
	}
	bad |= gend();
	printf("nccl %s\n", bad ? "failed" : "ok");
	return bad;
}
