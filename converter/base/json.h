/*
 * json.h: JSON written as it is built (json.c): the commas, the quoting
 * and the escapes in one place, for the report, diff and dump. A key is
 * NULL inside an array and at the top.
 */
#ifndef FT_JSON_H
#define FT_JSON_H

#include <stdint.h>
#include <stdio.h>

#define FT_JSON_DEPTH 32

struct ft_json {
	FILE *out;
	int depth;
	char close[FT_JSON_DEPTH];      /* '}' or ']' per open level */
	unsigned char more[FT_JSON_DEPTH];  /* a value written at this level */
};

void ft_json_begin(struct ft_json *j, FILE *out);
void ft_json_obj(struct ft_json *j, const char *key);     /* { */
void ft_json_arr(struct ft_json *j, const char *key);     /* [ */
void ft_json_end(struct ft_json *j);                      /* } or ] */
void ft_json_u64(struct ft_json *j, const char *key, uint64_t v);
void ft_json_int(struct ft_json *j, const char *key, int64_t v);
void ft_json_fixed(struct ft_json *j, const char *key, double v, int places);  /* "%.*f" */
void ft_json_g(struct ft_json *j, const char *key, double v);      /* 6 significant digits */
void ft_json_hex(struct ft_json *j, const char *key, uint64_t v);  /* "0x1f": a string */
void ft_json_str(struct ft_json *j, const char *key, const char *s);  /* NULL: null */
void ft_json_bool(struct ft_json *j, const char *key, int v);
void ft_json_null(struct ft_json *j, const char *key);

/* s quoted and escaped, alone (also dump's text form of an odd string) */
void ft_json_string(FILE *out, const char *s);

#endif
