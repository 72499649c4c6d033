/*
 * json_writer.c: converter/base/json.c driven through every call once, for
 * tests/unit/test_json_writer.py, which holds the exact text expected.
 */
#include <stdint.h>
#include <stdio.h>

#include "json.h"

int main(void)
{
	struct ft_json jw, *j = &jw;
	ft_json_begin(j, stdout);
	ft_json_obj(j, NULL);
	ft_json_str(j, "s", "a\"b\\c\n\x1f\x7f");
	ft_json_str(j, "utf8", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	ft_json_str(j, "bad", "\xff\xc0\xaf\xed\xa0\x80\xe2\x82");
	ft_json_str(j, "k\"ey", NULL);
	ft_json_arr(j, "empty");
	ft_json_end(j);
	ft_json_obj(j, "none");
	ft_json_end(j);
	ft_json_arr(j, "nums");
	ft_json_u64(j, NULL, UINT64_MAX);
	ft_json_int(j, NULL, INT64_MIN);
	ft_json_fixed(j, NULL, 2.5, 0);
	ft_json_fixed(j, NULL, -0.12345, 4);
	ft_json_g(j, NULL, 1234567.0);
	ft_json_g(j, NULL, 0.000125);
	ft_json_hex(j, NULL, 0x1f);
	ft_json_obj(j, NULL);
	ft_json_bool(j, "t", 1);
	ft_json_bool(j, "f", 0);
	ft_json_null(j, "n");
	ft_json_end(j);
	ft_json_end(j);
	ft_json_end(j);
	ft_json_end(j);          /* one more than opened: nothing written */
	putchar('\n');
	ft_json_string(stdout, "alone");
	putchar('\n');
	return 0;
}
