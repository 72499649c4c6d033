/*
 * exit_paths.c: opens N distinct paths that do not exist, spread over D
 * directories (DIR/dK/NAME), for tests/traced/test_strings_scale.py. NAME is the
 * file number, or with PAD > 0 that many 'x' then the number (long paths
 * fill the string table sooner). usage: exit_paths DIR N D PAD
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	long n = atol(argv[2]), d = atol(argv[3]), pad = atol(argv[4]);
	static char path[8192], fill[4096];
	if (pad >= (long)sizeof fill)
		return 2;
	memset(fill, 'x', (size_t)pad);
	long failed = 0;
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/d%ld/%s%ld", argv[1], i % d, fill, i);
		int fd = open(path, O_RDONLY);
		if (fd >= 0)
			close(fd);
		else
			failed++;
	}
	printf("%ld %ld\n", n, failed);
	return 0;
}
