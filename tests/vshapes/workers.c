/*
 * workers: forked worker processes produce batches; the main process waits
 * for each batch on the worker's pipe, then launches one 1.5 ms kernel on it
 * (6 ms with --work fast) and waits for it (a DataLoader with worker
 * processes, in C).
 * Owns the planted feed of shapes 1 and 2 (tests/traced/test_verdict_shapes.py);
 * never touches the driver in a worker (they are forked before cuInit).
 *
 *   --wait poll|read|select|epoll|recv
 *                      the main process waits in poll() on the pipe, with a
 *                      timeout, as multiprocessing's Queue.get(timeout=) does,
 *                      then reads (default); or blocks in read() directly; or
 *                      waits in select() or epoll_wait() (with a timeout)
 *                      then reads; or, with a socketpair per worker instead
 *                      of a pipe, blocks in recv(); or (psem, not with
 *                      --work fast) takes each batch from a one-slot mailbox
 *                      per worker in shared memory, waiting in sem_wait() on
 *                      a process-shared semaphore the worker posts
 *   --work cpu|io|fast per batch, a worker spins 16 ms on the CPU (default,
 *                      "preprocessing"); or reads a 768 KiB file it wrote
 *                      with 192 O_DIRECT reads of 4 KiB, each a request to the
 *                      disk ("I/O"); or nothing: every batch is ready before
 *                      the first launch (the fixed twin: the GPU is the limit; its
 *                      kernels take 6 ms, so that the ~0.3 ms a step can lose
 *                      waking up from the sync on a loaded machine stays small)
 *   --workers N        2 by default; 24 batches in all, round robin
 *   --dir DIR          where io workers write their file (default $TMPDIR or /tmp)
 *
 * Facts printed: "fact main PID", "fact worker PID" for each worker; with
 * io, exit 3 before anything else when the file system refuses O_DIRECT.
 */
#include <fcntl.h>
#include <poll.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "vshape.h"

#define BATCHES 24
#define MSG_BYTES 1024
#define CPU_NS_PER_BATCH 16000000ull
#define IO_READS 192
#define IO_CHUNK 4096
#define MAX_WORKERS 8

/* psem: one slot per worker, in memory shared with the workers */
struct mailbox {
	sem_t full, empty;
	char msg[MSG_BYTES];
};
static struct mailbox *box;

static const char image[] = "kernel step 1500000\nkernel long_step 6000000\n";

static void io_file(const char *dir, int id, char *path, size_t cap)
{
	snprintf(path, cap, "%s/vshape-worker%d-%d.bin", dir, (int)getpid(), id);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		vs_die(path);
	char block[IO_CHUNK];
	memset(block, id + 1, sizeof block);
	for (int i = 0; i < IO_READS; i++)
		vs_write_full(fd, block, sizeof block);
	if (fsync(fd) != 0 || close(fd) != 0)
		vs_die(path);
}

static void worker(int id, int nworkers, const char *work, const char *dir, int out)
{
	char path[4200];
	unsigned char *buf = NULL;
	int fd = -1;
	if (strcmp(work, "io") == 0) {
		io_file(dir, id, path, sizeof path);
		if (posix_memalign((void **)&buf, 4096, IO_CHUNK) != 0)
			exit(1);
		fd = open(path, O_RDONLY | O_DIRECT);
		if (fd < 0)
			vs_die(path);
	}
	char msg[MSG_BYTES];
	for (int b = id; b < BATCHES; b += nworkers) {
		if (strcmp(work, "cpu") == 0) {
			vs_cpu(CPU_NS_PER_BATCH);
		} else if (fd >= 0) {
			for (int i = 0; i < IO_READS; i++)
				if (pread(fd, buf, IO_CHUNK, (off_t)i * IO_CHUNK) != IO_CHUNK)
					vs_die("pread");
		}
		memset(msg, b & 0xff, sizeof msg);
		if (box) {
			while (sem_wait(&box[id].empty) != 0)
				;
			memcpy(box[id].msg, msg, sizeof msg);
			sem_post(&box[id].full);
		} else {
			vs_write_full(out, msg, sizeof msg);
		}
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	close(out);
	exit(0);
}

/* the next batch from fd: wait as `wait` says (with a timeout, retried),
 * then read it; or recv it */
static void next_batch(int fd, const char *wait, int ep, char *msg)
{
	int r = 0;
	if (box) {
		struct mailbox *m = &box[fd];     /* fd: the worker's index */
		while (sem_wait(&m->full) != 0)
			;
		memcpy(msg, m->msg, MSG_BYTES);
		sem_post(&m->empty);
		return;
	}
	if (strcmp(wait, "poll") == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		while ((r = poll(&p, 1, 5000)) == 0 || (r < 0 && errno == EINTR))
			;
	} else if (strcmp(wait, "select") == 0) {
		do {
			fd_set set;
			FD_ZERO(&set);
			FD_SET(fd, &set);
			struct timeval tv = { .tv_sec = 5 };
			r = select(fd + 1, &set, NULL, NULL, &tv);
		} while (r == 0 || (r < 0 && errno == EINTR));
	} else if (strcmp(wait, "epoll") == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			vs_die("epoll_ctl");
		while ((r = epoll_wait(ep, &ev, 1, 5000)) == 0 || (r < 0 && errno == EINTR))
			;
		if (epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) != 0)
			vs_die("epoll_ctl");
	} else if (strcmp(wait, "recv") == 0) {
		size_t got = 0;
		while (got < MSG_BYTES) {
			ssize_t n = recv(fd, msg + got, MSG_BYTES - got, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fprintf(stderr, "workers: a worker ended early\n");
				exit(1);
			}
			got += (size_t)n;
		}
		return;
	}
	if (r < 0)
		vs_die(wait);
	if (!vs_read_full(fd, msg, MSG_BYTES)) {
		fprintf(stderr, "workers: a worker ended early\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *wait = vs_opt(argc, argv, "--wait", "poll");
	const char *work = vs_opt(argc, argv, "--work", "cpu");
	int n = atoi(vs_opt(argc, argv, "--workers", "2"));
	const char *tmp = getenv("TMPDIR");
	const char *dir = vs_opt(argc, argv, "--dir", tmp && *tmp ? tmp : "/tmp");
	if (n < 1 || n > MAX_WORKERS || (strcmp(wait, "poll") && strcmp(wait, "read") &&
	    strcmp(wait, "select") && strcmp(wait, "epoll") && strcmp(wait, "recv") &&
	     strcmp(wait, "psem")) || (strcmp(wait, "psem") == 0 && strcmp(work, "fast") == 0) ||
	    (strcmp(work, "cpu") && strcmp(work, "io") && strcmp(work, "fast"))) {
		fprintf(stderr, "usage: workers [--wait poll|read|select|epoll|recv|psem] [--work cpu|io|fast] "
			"[--workers 1-%d] [--dir DIR]\n", MAX_WORKERS);
		return 2;
	}
	if (strcmp(work, "io") == 0) {        /* O_DIRECT here? (tmpfs says no) */
		char probe[4200];
		snprintf(probe, sizeof probe, "%s/vshape-probe-%d", dir, (int)getpid());
		int fd = open(probe, O_RDWR | O_CREAT | O_DIRECT, 0600);
		if (fd < 0 && errno == EINVAL) {
			fprintf(stderr, "workers: no O_DIRECT in %s\n", dir);
			return 3;
		}
		if (fd < 0)
			vs_die(probe);
		close(fd);
		unlink(probe);
	}
	FACT("main", "%d", (int)getpid());
	int in[MAX_WORKERS];
	pid_t pid[MAX_WORKERS];
	if (strcmp(wait, "psem") == 0) {
		box = mmap(NULL, sizeof *box * (size_t)n, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (box == MAP_FAILED)
			vs_die("mmap");
		for (int w = 0; w < n; w++)
			if (sem_init(&box[w].full, 1, 0) != 0 || sem_init(&box[w].empty, 1, 1) != 0)
				vs_die("sem_init");
	}
	for (int w = 0; w < n; w++) {
		int p[2];
		if (strcmp(wait, "recv") == 0 ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p))
			vs_die("pipe");
		pid[w] = fork();
		if (pid[w] < 0)
			vs_die("fork");
		if (pid[w] == 0) {
			close(p[0]);
			for (int o = 0; o < w; o++)
				close(in[o]);
			worker(w, n, work, dir, p[1]);
		}
		close(p[1]);
		in[w] = p[0];
		FACT("worker", "%d", (int)pid[w]);
	}
	if (strcmp(work, "fast") == 0) {      /* every batch is ready: wait for the pipes */
		for (int w = 0; w < n; w++) {
			struct pollfd p = { .fd = in[w], .events = POLLIN };
			while (poll(&p, 1, -1) < 0 && errno == EINTR)
				;
		}
		usleep(20000);                    /* the workers wrote all of them */
	}

	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction step = cudrv_kernel(lib, strcmp(work, "fast") == 0 ? "long_step" : "step");
	CUdeviceptr d_batch;
	unsigned char *h_batch;
	CK(cu.MemAlloc(&d_batch, MSG_BYTES));
	CK(cu.MemHostAlloc((void **)&h_batch, MSG_BYTES, 0));
	void *args[] = { &d_batch };
	int ep = epoll_create1(0);
	if (ep < 0)
		vs_die("epoll_create1");
	uint64_t t0 = cudrv_now_ns();
	for (int b = 0; b < BATCHES; b++) {
		next_batch(box ? b % n : in[b % n], wait, ep, (char *)h_batch);
		CK(cu.MemcpyHtoDAsync(d_batch, h_batch, MSG_BYTES, NULL));
		CK(cu.LaunchKernel(step, 128, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		CK(cu.StreamSynchronize(NULL));
	}
	uint64_t t1 = cudrv_now_ns();
	int bad = 0;
	for (int w = 0; w < n; w++) {
		int st;
		if (waitpid(pid[w], &st, 0) != pid[w] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (bad)
		return bad;
	printf("workers: %d workers (%s), main waits in %s, %d batches, %.1f ms\n", n, work,
	       wait, BATCHES, (double)(t1 - t0) / 1e6);
	return 0;
}
