/*
 * io_fdsteal.c: test program for tests/traced/test_io_dup.py. A program that
 * takes over every descriptor number, as daemons and fork-exec helpers do,
 * must neither lose the tracer its file nor get trace bytes in its own.
 *
 *   io_fdsteal HOW DATA VICTIM N   N reads of 100 bytes of DATA; then HOW:
 *       closefrom     closefrom(3)
 *       close_range   close_range(3, ~0U, 0)
 *       close_all     close(fd) for fd 3..4095
 *     then opens VICTIM (write), dup2s it onto every fd from 3 to 899
 *     and dup3s it onto 900..999, writes "hello\n" through each of fd 3
 *     and fd 999, closes 3..999, and does N more reads of DATA.
 *     Prints "reads=2N"; the victim must then hold exactly two lines.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void data_reads(const char *path, int n)
{
	char buf[100];
	for (int i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
			perror(path);
			exit(90);
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	const char *how = argv[1], *data = argv[2], *victim = argv[3];
	int n = atoi(argv[4]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	data_reads(data, n);
	if (!strcmp(how, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(how, "close_range")) {
		if (close_range(3, ~0U, 0) != 0) {
			perror("close_range");
			return 3;
		}
	} else if (!strcmp(how, "close_all")) {
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	} else {
		return 2;
	}
	int v = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (v < 0) {
		perror(victim);
		return 4;
	}
	for (int fd = 3; fd < 1000; fd++) {
		if (fd == v)
			continue;
		int r = fd < 900 ? dup2(v, fd) : dup3(v, fd, O_CLOEXEC);
		if (r != fd) {
			perror("dup2");
			return 5;
		}
	}
	if (write(3, "hello\n", 6) != 6 || write(999, "hello\n", 6) != 6)
		return 6;
	for (int fd = 3; fd < 1000; fd++)
		close(fd);
	data_reads(data, n);
	printf("reads=%d\n", 2 * n);
	return 0;
}
