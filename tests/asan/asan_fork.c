/*
 * asan_fork: built with -fsanitize=address by tests/traced/test_asan_program.py
 * (not by the Makefile). Forks N children at once after start, each
 * reading FILE R times with pread; waits for each; prints "done".
 *   asan_fork FILE N R
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[2]), reads = atoi(argv[3]);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			int fd = open(argv[1], O_RDONLY);
			char *b = malloc(64);
			for (int k = 0; k < reads; k++)
				if (pread(fd, b, 64, 0) != 64)
					_exit(3);
			free(b);
			close(fd);
			exit(0);
		}
		int st;
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	printf("done\n");
	return 0;
}
