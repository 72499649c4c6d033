/*
 * stdio_fortify.c: built -O2 with _FORTIFY_SOURCE=2, so that
 * fread, fread_unlocked and fgetws into buffers of known size with a
 * length not known at compile time become __fread_chk,
 * __fread_unlocked_chk and __fgetws_chk (tests/traced/test_io_paths.py
 * checks each with nm).
 *   stdio_fortify fread|fread_unlocked|fgetws FILE LEN
 * reads FILE whole, LEN bytes (characters) a call at most; prints
 * "MODE bytes B calls C" (fgetws: characters).
 */
#undef _FORTIFY_SOURCE
#define _FORTIFY_SOURCE 2
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	FILE *f = fopen(argv[2], "r");
	if (!f)
		return 1;
	int len = atoi(argv[3]);
	unsigned long bytes = 0, calls = 0;
	if (!strcmp(argv[1], "fread")) {
		char buf[512];
		size_t got;
		if (len < 1 || len > (int)sizeof buf)
			return 2;
		while (calls++, (got = fread(buf, 1, (size_t)len, f)) > 0)
			bytes += got;
	} else if (!strcmp(argv[1], "fread_unlocked")) {
		char buf[512];
		size_t got;
		if (len < 1 || len > (int)sizeof buf)
			return 2;
		while (calls++, (got = fread_unlocked(buf, 1, (size_t)len, f)) > 0)
			bytes += got;
	} else if (!strcmp(argv[1], "fgetws")) {
		wchar_t buf[512];
		if (len < 2 || len > 512)
			return 2;
		while (calls++, fgetws(buf, len, f))
			bytes += wcslen(buf);
	} else {
		return 2;
	}
	fclose(f);
	printf("%s bytes %lu calls %lu\n", argv[1], bytes, calls);
	return 0;
}
