/*
 * fuzz_reader.c: libFuzzer harness for the trace reader and everything
 * downstream of it (dump, report, convert, diff).
 *
 * One input is one trace file (or two: a second "FEEDTRC\n" magic at an
 * offset >= 256 splits the input into two files of one run directory, so
 * the cross-process paths, e.g. clock-rate borrowing, are reached too).
 * The input is written to a private temporary directory and read back
 * through the tool's own entry points, output going to /dev/null.
 *
 * Chunk checksums (FNV-1a) would stop almost every mutation at the framing
 * check, so each input is read twice: as it is (framing, resync, damage
 * reports) and, when that changes anything, with every chunk header found
 * at a chunk boundary given correct hashes ("fixed up"), so mutations of
 * sizes, types, codecs and payloads reach the decoders.
 *
 * Each input is also read once more with its first file cut short between
 * the reader's open pass and its event pass (a file that shrinks under
 * the reader), at a fraction of its length the input's last byte picks.
 *
 * Build: scripts/fuzz.sh build (clang -fsanitize=fuzzer,address,undefined).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "reader.h"
#include "format.h"

static char dir[256], file1[300], file2[300];

static void write_file(const char *path, const uint8_t *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(path);
		abort();
	}
	while (n) {
		ssize_t w = write(fd, d, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror(path);
			abort();
		}
		d += w;
		n -= (size_t)w;
	}
	close(fd);
}

/* Give every chunk header met while walking the chunk chain correct
 * hashes. stored_size is clamped to what the file holds. Returns 1 if it
 * changed anything. */
static int fixup(uint8_t *d, size_t n)
{
	int changed = 0;
	if (n < sizeof(struct ft_file_header))
		return 0;
	uint16_t hs;
	memcpy(&hs, d + 10, 2);
	size_t off = hs >= sizeof(struct ft_file_header) ? hs : sizeof(struct ft_file_header);
	while (off + sizeof(struct ft_chunk_header) <= n) {
		struct ft_chunk_header h;
		memcpy(&h, d + off, sizeof h);
		if (h.magic != FT_CHUNK_MAGIC)
			break;
		size_t room = n - off - sizeof h;
		if (h.stored_size > room) {
			h.stored_size = (uint32_t)room;
			changed = 1;
		}
		uint32_t ph = ft_hash32(d + off + sizeof h, h.stored_size);
		if (ph != h.payload_hash) {
			h.payload_hash = ph;
			changed = 1;
		}
		uint32_t hh = ft_hash32(&h, offsetof(struct ft_chunk_header, header_hash));
		if (hh != h.header_hash) {
			h.header_hash = hh;
			changed = 1;
		}
		memcpy(d + off, &h, sizeof h);
		off += sizeof h + h.stored_size;
	}
	return changed;
}

static void run_tool(int (*cmd)(int, char **), int argc, const char **argv)
{
	cmd(argc, (char **)argv);
	fflush(stdout);
}

static void read_all(unsigned sel)
{
	const char *dump_json[] = { dir, "--json" };
	run_tool(ft_cmd_dump, 2, dump_json);
	const char *conv[] = { dir, "-o", "/dev/null", "--quiet" };
	run_tool(ft_cmd_convert, 4, conv);
	switch (sel % 4) {
	case 0: {
		const char *a[] = { dir };
		run_tool(ft_cmd_dump, 1, a);
		break;
	}
	case 1: {
		const char *a[] = { dir };
		run_tool(ft_cmd_report, 1, a);
		break;
	}
	case 2: {
		const char *a[] = { dir, "--json" };
		run_tool(ft_cmd_report, 2, a);
		break;
	}
	case 3: {
		const char *a[] = { dir, dir, "--json", "-o", "/dev/null" };
		run_tool(ft_cmd_diff, 5, a);
		break;
	}
	}
}

static int count_event(const struct ft_event *ev, void *arg)
{
	(void)ev;
	++*(uint64_t *)arg;
	return 0;
}

/* file1 (n1 bytes) cut to eighths of its length after ft_trace_open */
static void shrink_under_reader(size_t n1, unsigned sel)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	struct ft_trace tr;
	if (ft_trace_open(dir, &tr, null) != 0)
		return;
	if (truncate(file1, (off_t)(n1 * ((sel >> 2) % 8) / 8)) != 0)
		abort();
	uint64_t n = 0;
	for (int i = 0; i < tr.nprocs; i++)
		ft_process_events(tr.procs[i], count_event, &n, null);
	ft_trace_close(&tr);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *base = getenv("FT_FUZZ_TMP");
	if (!base) {
		struct stat st;
		base = stat("/dev/shm", &st) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	}
	snprintf(dir, sizeof dir, "%s/ftfuzz.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(file1, sizeof file1, "%s/a.1.ft", dir);
	snprintf(file2, sizeof file2, "%s/b.2.ft", dir);
	/* the tool prints to stdout; its damage reports (expected here) go to
	 * stderr, which the runs silence with -close_fd_mask=2 (sanitizer
	 * reports still reach libFuzzer's own copy of stderr) */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static void cleanup(void)
{
	unlink(file1);
	unlink(file2);
}

__attribute__((destructor)) static void remove_dir(void)
{
	if (dir[0]) {
		cleanup();
		rmdir(dir);
	}
}

static void one(const uint8_t *d, size_t n, unsigned sel)
{
	size_t split = n;
	if (n > 2 * sizeof(struct ft_file_header)) {
		const uint8_t *m = memmem(d + sizeof(struct ft_file_header),
					  n - sizeof(struct ft_file_header), FT_FILE_MAGIC, 8);
		if (m)
			split = (size_t)(m - d);
	}
	cleanup();
	write_file(file1, d, split);
	if (split < n)
		write_file(file2, d + split, n - split);
	read_all(sel);
	shrink_under_reader(split, sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel = size ? data[size - 1] : 0;
	one(data, size, sel);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	int changed = 0;
	/* fix each file of the input separately */
	size_t start = 0;
	while (start < size) {
		size_t end = size;
		if (size - start > 2 * sizeof(struct ft_file_header)) {
			const uint8_t *m = memmem(copy + start + sizeof(struct ft_file_header),
						  size - start - sizeof(struct ft_file_header),
						  FT_FILE_MAGIC, 8);
			if (m)
				end = (size_t)(m - copy);
		}
		changed |= fixup(copy + start, end - start);
		start = end;
	}
	if (changed)
		one(copy, size, sel);
	free(copy);
	return 0;
}
