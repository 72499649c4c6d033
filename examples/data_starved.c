/*
 * data_starved: the GPU waits for the data loader.
 *
 * The example first writes its data set: 192 files of 32 KiB (12 batches x
 * 16 files) in a temporary directory it creates (under $TMPDIR or /tmp, or
 * the directory given with --dir DIR, which must exist), and removes them at
 * the end.
 *
 * A loader thread reads the 16 files of each batch into a page-locked
 * staging slot and hands the slot to the main thread through semaphores; the
 * main thread copies the batch to the GPU (cuMemcpyHtoDAsync, page-locked,
 * then cuEventRecord so that the loader refills a slot only after its copy:
 * cuEventSynchronize) and launches one 2 ms "train_step" kernel per batch.
 *
 * The loader opens the files with O_DIRECT, so that every read() is a real
 * request to the storage device, as for a data set that is not in the page
 * cache (on a file system without O_DIRECT, e.g. tmpfs, or with --cached,
 * it reads through the page cache: the counts stay the same, the 4 KiB reads
 * just cost less). The data set is flushed to disk (syncfs) once written.
 *
 * Broken (default): the loader reads each file with 4 KiB read() calls until
 * end of file (8 reads of 4096 bytes + 1 read returning 0 per file), and
 * there is one staging slot (no prefetch): the GPU waits for the reads.
 * Fixed (--fixed): each file is read whole with one read() of its size
 * (known from fstat), and there are 3 staging slots, so the loader runs up
 * to 3 batches ahead of the GPU.
 *
 * Exact numbers: examples/README.md. Driver path: FT_CUDA_PATH (cudrv.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudrv.h"

#define BATCHES 12
#define FILES_PER_BATCH 16
#define NFILES (BATCHES * FILES_PER_BATCH)
#define FILE_BYTES (32 * 1024)
#define SMALL_READ 4096
#define BATCH_BYTES (FILES_PER_BATCH * FILE_BYTES)
#define MAX_SLOTS 3

static const char image[] = "kernel train_step 2000000\n";

static char dir[4096];
static int fixed, cached;
static int direct_used = -1;   /* 1: O_DIRECT reads, 0: page cache */
static unsigned char *bounce; /* O_DIRECT needs an aligned buffer */
static int nslots;
static unsigned char *slot[MAX_SLOTS];
static CUevent copied[MAX_SLOTS];
static sem_t empty_slots, full_slots;

static void file_path(char *out, size_t cap, int i)
{
	snprintf(out, cap, "%s/sample%03d.bin", dir, i);
}

static void write_dataset(void)
{
	unsigned char buf[FILE_BYTES];
	for (int i = 0; i < NFILES; i++) {
		char p[4200];
		file_path(p, sizeof p, i);
		memset(buf, i & 0xff, sizeof buf);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) != 0) {
			perror(p);
			exit(1);
		}
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		syncfs(dfd);
		close(dfd);
	}
}

static void remove_dataset(int made_dir)
{
	for (int i = 0; i < NFILES; i++) {
		char p[4200];
		file_path(p, sizeof p, i);
		unlink(p);
	}
	if (made_dir)
		rmdir(dir);
}

/* One sample file into dst; returns the bytes read. */
static size_t load_file(int i, unsigned char *dst)
{
	char p[4200];
	file_path(p, sizeof p, i);
	int fd = -1;
	if (direct_used != 0) {
		fd = open(p, O_RDONLY | O_DIRECT);
		if (fd < 0 && errno == EINVAL)
			direct_used = 0;        /* not supported here: page cache */
		else if (fd >= 0)
			direct_used = 1;
	}
	if (direct_used == 0)
		fd = open(p, O_RDONLY);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	size_t got = 0;
	if (!fixed) {
		ssize_t r;
		while ((r = read(fd, bounce, SMALL_READ)) > 0) {    /* 4 KiB at a time */
			memcpy(dst + got, bounce, (size_t)r);
			got += (size_t)r;
		}
		if (r < 0) {
			perror(p);
			exit(1);
		}
	} else {
		struct stat st;
		if (fstat(fd, &st) != 0 || st.st_size != FILE_BYTES ||
		    read(fd, bounce, (size_t)st.st_size) != (ssize_t)st.st_size) {
			perror(p);
			exit(1);
		}
		got = (size_t)st.st_size;
		memcpy(dst, bounce, got);
	}
	close(fd);
	return got;
}

static void *loader(void *arg)
{
	(void)arg;
	cudrv_thread();
	for (int b = 0; b < BATCHES; b++) {
		int s = b % nslots;
		while (sem_wait(&empty_slots) != 0 && errno == EINTR)
			;
		if (b >= nslots)        /* the slot's previous copy must be done */
			CK(cu.EventSynchronize(copied[s]));
		for (int f = 0; f < FILES_PER_BATCH; f++)
			if (load_file(b * FILES_PER_BATCH + f, slot[s] + (size_t)f * FILE_BYTES) != FILE_BYTES) {
				fprintf(stderr, "short file\n");
				exit(1);
			}
		sem_post(&full_slots);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int made_dir = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fixed") == 0)
			fixed = 1;
		else if (strcmp(argv[i], "--cached") == 0)
			cached = 1;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			snprintf(dir, sizeof dir, "%s", argv[++i]);
		else {
			fprintf(stderr, "usage: data_starved [--fixed] [--cached] [--dir DIR]\n");
			return 2;
		}
	}
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/feedtrace-data_starved-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
		made_dir = 1;
	}
	nslots = fixed ? 3 : 1;
	if (cached)
		direct_used = 0;
	if (posix_memalign((void **)&bounce, 4096, FILE_BYTES) != 0)
		return 1;
	write_dataset();

	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction step_k = cudrv_kernel(lib, "train_step");
	CUdeviceptr d_batch;
	CK(cu.MemAlloc(&d_batch, BATCH_BYTES));
	for (int s = 0; s < nslots; s++) {
		CK(cu.MemHostAlloc((void **)&slot[s], BATCH_BYTES, 0));
		CK(cu.EventCreate(&copied[s], CU_EVENT_DISABLE_TIMING));
	}
	sem_init(&empty_slots, 0, (unsigned)nslots);
	sem_init(&full_slots, 0, 0);
	void *args[] = { &d_batch };

	uint64_t t0 = cudrv_now_ns();
	pthread_t th;
	pthread_create(&th, NULL, loader, NULL);
	for (int b = 0; b < BATCHES; b++) {
		int s = b % nslots;
		while (sem_wait(&full_slots) != 0 && errno == EINTR)
			;
		CK(cu.MemcpyHtoDAsync(d_batch, slot[s], BATCH_BYTES, NULL));
		CK(cu.EventRecord(copied[s], NULL));
		sem_post(&empty_slots);
		CK(cu.LaunchKernel(step_k, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	}
	pthread_join(th, NULL);
	CK(cu.StreamSynchronize(NULL));
	uint64_t t1 = cudrv_now_ns();
	remove_dataset(made_dir);
	printf("data_starved%s [%s]: %d batches x %d files of %d KiB, %s %s reads, %d slot%s, %.1f ms\n",
	       fixed ? " --fixed" : "", cu.path, BATCHES, FILES_PER_BATCH, FILE_BYTES / 1024,
	       fixed ? "whole-file" : "4 KiB", direct_used == 1 ? "O_DIRECT" : "cached",
	       nslots, nslots > 1 ? "s" : "",
	       (double)(t1 - t0) / 1e6);
	return 0;
}
