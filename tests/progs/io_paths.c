/*
 * io_paths.c: file reads that do not go through read(): the stdio readers,
 * copies in the kernel and POSIX aio (tests/traced/test_io_paths.py).
 *   io_paths stdio MODE FILE   read FILE whole by one stdio reader:
 *                              fgets, getline, getdelim (','), fgetc, getc,
 *                              getc_unlocked (inlined: __uflow refills),
 *                              fread_unlocked (100 bytes a call), fscanf
 *                              ("%511s": a line a call; __isoc99_fscanf),
 *                              gnu_fscanf (the symbol fscanf, by dlsym),
 *                              fgetwc, getwc, fgetws (characters of the
 *                              locale LC_CTYPE says), getchar (of stdin,
 *                              which the caller opens on FILE; inlined as
 *                              getc), getchar_call (getchar not inlined);
 *                              prints the bytes (the wide readers: the
 *                              characters) and the calls made
 *   io_paths threads MODE F1 F2 F1 and F2 read at once by two threads, each
 *                              whole by the stdio reader MODE (as stdio)
 *   io_paths copy CHUNK IN OUT copy IN to OUT.N by copy_file_range
 *                              (OUT.1), sendfile (OUT.2) and splice through
 *                              a pipe (OUT.3), CHUNK bytes a call
 *   io_paths aio BLOCK N FILE  N reads of BLOCK bytes by aio_read (each
 *                              waited for by one aio_suspend, then
 *                              aio_return),
 *                              N more listed by lio_listio (LIO_WAIT, each
 *                              then aio_return), N more by lio_listio
 *                              (LIO_NOWAIT, each then aio_suspend and
 *                              aio_return), one by each of lio_listio's
 *                              versions GLIBC_2.4 and GLIBC_2.2.5 (dlvsym;
 *                              LIO_WAIT), one aio_write of FILE.w
 * Built -g -O2 as users build: getline is then glibc's inline __getdelim.
 */
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>
#include <wchar.h>

static int stdio_read(const char *mode, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	unsigned long bytes = 0, calls = 0;
	char buf[512];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int c;
	if (!strcmp(mode, "fgets")) {
		while (calls++, fgets(buf, sizeof buf, f))
			bytes += strlen(buf);
	} else if (!strcmp(mode, "getline")) {
		while (calls++, (n = getline(&line, &cap, f)) > 0)
			bytes += (unsigned long)n;
	} else if (!strcmp(mode, "getdelim")) {
		while (calls++, (n = getdelim(&line, &cap, ',', f)) > 0)
			bytes += (unsigned long)n;
	} else if (!strcmp(mode, "fgetc")) {
		while (calls++, (c = fgetc(f)) != EOF)
			bytes++;
	} else if (!strcmp(mode, "getc")) {
		while (calls++, (c = getc(f)) != EOF)
			bytes++;
	} else if (!strcmp(mode, "getc_unlocked")) {
		while (calls++, (c = getc_unlocked(f)) != EOF)
			bytes++;
	} else if (!strcmp(mode, "fread_unlocked")) {
		size_t got;
		while (calls++, (got = fread_unlocked(buf, 1, 100, f)) > 0)
			bytes += got;
	} else if (!strcmp(mode, "fscanf") || !strcmp(mode, "gnu_fscanf")) {
		int (*scan)(FILE *, const char *, ...) = fscanf;
		if (mode[0] == 'g')
			scan = (int (*)(FILE *, const char *, ...))dlsym(RTLD_DEFAULT, "fscanf");
		while (calls++, scan(f, "%511s", buf) == 1)
			bytes += strlen(buf) + 1;       /* and its newline */
	} else if (!strcmp(mode, "fgetwc") || !strcmp(mode, "getwc")) {
		wint_t w;
		setlocale(LC_CTYPE, "");        /* characters as the caller's locale says */
		while (calls++, (w = mode[0] == 'f' ? fgetwc(f) : getwc(f)) != WEOF)
			bytes++;
	} else if (!strcmp(mode, "fgetws")) {
		wchar_t wbuf[512];
		setlocale(LC_CTYPE, "");
		while (calls++, fgetws(wbuf, 512, f))
			bytes += wcslen(wbuf);
	} else if (!strcmp(mode, "getchar")) {
		while (calls++, (c = getchar()) != EOF)   /* at -O2: getc(stdin) inline */
			bytes++;
	} else if (!strcmp(mode, "getchar_call")) {
		int (*volatile call)(void) = getchar;     /* the function itself */
		while (calls++, (c = call()) != EOF)
			bytes++;
	} else {
		return 2;
	}
	free(line);
	fclose(f);
	printf("%s bytes %lu calls %lu\n", mode, bytes, calls);
	return 0;
}

struct job {
	const char *mode, *path;
	int rc;
};

static void *reader(void *arg)
{
	struct job *j = arg;
	j->rc = stdio_read(j->mode, j->path);
	return NULL;
}

static int two_threads(const char *mode, const char *a, const char *b)
{
	struct job j[2] = { { mode, a, 0 }, { mode, b, 0 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, reader, &j[i]))
			return 13;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return j[0].rc | j[1].rc;
}

static int copy(size_t chunk, const char *in, const char *out)
{
	char name[4096];
	ssize_t r;
	int fi = open(in, O_RDONLY);
	snprintf(name, sizeof name, "%s.1", out);
	int fo = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while ((r = copy_file_range(fi, NULL, fo, NULL, chunk, 0)) > 0)
		;
	if (r < 0)
		return 3;
	close(fo);
	lseek(fi, 0, SEEK_SET);
	snprintf(name, sizeof name, "%s.2", out);
	fo = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while ((r = sendfile(fo, fi, NULL, chunk)) > 0)
		;
	if (r < 0)
		return 4;
	close(fo);
	lseek(fi, 0, SEEK_SET);
	snprintf(name, sizeof name, "%s.3", out);
	fo = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int p[2];
	if (pipe(p))
		return 5;
	while ((r = splice(fi, NULL, p[1], NULL, chunk, 0)) > 0)
		for (ssize_t left = r; left > 0;) {
			ssize_t w = splice(p[0], NULL, fo, NULL, (size_t)left, 0);
			if (w <= 0)
				return 6;
			left -= w;
		}
	if (r < 0)
		return 7;
	close(fo);
	close(fi);
	printf("copied\n");
	return 0;
}

static int aio(size_t block, int n, const char *path)
{
	int fd = open(path, O_RDONLY);
	char *buf = malloc(block * (size_t)n);
	struct aiocb *cbs = calloc((size_t)n, sizeof *cbs);
	struct aiocb **list = calloc((size_t)n, sizeof *list);
	long total = 0;
	for (int i = 0; i < n; i++) {
		struct aiocb *cb = &cbs[i];
		cb->aio_fildes = fd;
		cb->aio_buf = buf + (size_t)i * block;
		cb->aio_nbytes = block;
		cb->aio_offset = (off_t)((size_t)i * block);
		if (aio_read(cb))
			return 8;
		const struct aiocb *one[1] = { cb };
		if (aio_suspend(one, 1, NULL) || aio_error(cb))
			return 12;
		total += aio_return(cb);
	}
	memset(cbs, 0, (size_t)n * sizeof *cbs);
	for (int i = 0; i < n; i++) {
		cbs[i].aio_fildes = fd;
		cbs[i].aio_buf = buf + (size_t)i * block;
		cbs[i].aio_nbytes = block;
		cbs[i].aio_offset = (off_t)((size_t)(n + i) * block);
		cbs[i].aio_lio_opcode = LIO_READ;
		list[i] = &cbs[i];
	}
	if (lio_listio(LIO_WAIT, list, n, NULL))
		return 9;
	for (int i = 0; i < n; i++)
		total += aio_return(&cbs[i]);
	for (int i = 0; i < n; i++)
		cbs[i].aio_offset = (off_t)((size_t)(2 * n + i) * block);
	if (lio_listio(LIO_NOWAIT, list, n, NULL))
		return 13;
	for (int i = 0; i < n; i++) {
		const struct aiocb *one[1] = { &cbs[i] };
		while (aio_error(&cbs[i]) == EINPROGRESS)
			if (aio_suspend(one, 1, NULL) && errno != EINTR)
				return 14;
		total += aio_return(&cbs[i]);
	}
	static const char *const versions[] = { "GLIBC_2.4", "GLIBC_2.2.5" };
	for (int v = 0; v < 2; v++) {
		int (*lio)(int, struct aiocb *const[], int, struct sigevent *) =
			(int (*)(int, struct aiocb *const[], int, struct sigevent *))
			dlvsym(RTLD_DEFAULT, "lio_listio", versions[v]);
		cbs[0].aio_offset = (off_t)((size_t)(3 * n + v) * block);
		if (!lio || lio(LIO_WAIT, list, 1, NULL))
			return 15;
		/* GLIBC_2.2.5's may return before the read is done */
		while (aio_error(&cbs[0]) == EINPROGRESS)
			usleep(100);
		total += aio_return(&cbs[0]);
	}
	char name[4096];
	snprintf(name, sizeof name, "%s.w", path);
	int wfd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct aiocb w;
	memset(&w, 0, sizeof w);
	w.aio_fildes = wfd;
	w.aio_buf = buf;
	w.aio_nbytes = block;
	if (aio_write(&w))
		return 10;
	const struct aiocb *one[1] = { &w };
	if (aio_suspend(one, 1, NULL) || aio_error(&w) || aio_return(&w) != (ssize_t)block)
		return 11;
	close(wfd);
	close(fd);
	printf("aio read %ld\n", total);
	free(list);
	free(cbs);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "stdio"))
		return stdio_read(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "threads"))
		return two_threads(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "copy"))
		return copy((size_t)atol(argv[2]), argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "aio"))
		return aio((size_t)atol(argv[2]), atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: io_paths stdio|copy|aio ...\n");
	return 2;
}
