/*
 * life_early_lib.c: built by tests/traced/test_lifecycle.py as a shared library
 * (cc -shared -fPIC) and preloaded beside libfeedtrace.so. Its constructor
 * opens and reads LIFE_EARLY_FILE with hooked libc calls, which may run
 * before feedtrace's own constructor. The Makefile also builds this file as
 * a program (it builds every C file in tests/progs), hence the main() below.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int early_reads = -1;

__attribute__((constructor)) static void life_early_ctor(void)
{
	const char *path = getenv("LIFE_EARLY_FILE");
	if (!path)
		return;
	char buf[100];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	early_reads = (int)read(fd, buf, sizeof buf);
	close(fd);
	/* a message the test looks for: the constructor ran and read */
	char msg[64];
	int n = snprintf(msg, sizeof msg, "early ctor read %d\n", early_reads);
	if (write(2, msg, (size_t)n) < 0)
		_exit(99);
}

int main(void)
{
	printf("early_reads=%d\n", early_reads);
	return 0;
}
