/*
 * fileonly: no GPU and no batches (shape 9 of tests/traced/test_verdict_shapes.py):
 * writes a 1 MiB file 4 KiB at a time, reads it back 4 KiB at a time 8
 * times, removes it and exits. Owns nothing but its file; the report must
 * not invent a feed for it.
 *
 *   --dir DIR  where the file goes (default $TMPDIR or /tmp)
 *
 * Facts printed: "fact main PID".
 */
#include <fcntl.h>

#include "vshape.h"

#define CHUNK 4096
#define CHUNKS 256

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	const char *dir = vs_opt(argc, argv, "--dir", tmp && *tmp ? tmp : "/tmp");
	char p[4200], buf[CHUNK];
	FACT("main", "%d", (int)getpid());
	snprintf(p, sizeof p, "%s/vshape-fileonly-%d.bin", dir, (int)getpid());
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		vs_die(p);
	memset(buf, 3, sizeof buf);
	for (int i = 0; i < CHUNKS; i++)
		vs_write_full(fd, buf, CHUNK);
	long total = 0;
	for (int pass = 0; pass < 8; pass++) {
		if (lseek(fd, 0, SEEK_SET) != 0)
			vs_die("lseek");
		ssize_t r;
		while ((r = read(fd, buf, CHUNK)) > 0)
			total += r;
	}
	close(fd);
	unlink(p);
	printf("fileonly: read %ld bytes\n", total);
	return total == 8L * CHUNK * CHUNKS ? 0 : 1;
}
