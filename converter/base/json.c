/*
 * json.c: the JSON writer (json.h). Each value first writes the comma
 * its level needs, then its key; every string, key or value, through
 * ft_json_string, the one place for quoting and escapes.
 */
#include <inttypes.h>

#include "json.h"

/* the length of the valid UTF-8 sequence at p (1 to 4), 0 if none */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	int n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* s as a JSON string, quotes included. A byte that is not part of valid
 * UTF-8 (a path's bytes in another encoding) is written as \udcXX, the
 * lone surrogate of Python's surrogateescape: the output stays UTF-8, and
 * os.fsencode() of the string read back gives the original bytes. */
void ft_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		int n;
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else if ((n = utf8_len(p)) == 0)
			fprintf(out, "\\udc%02x", *p);
		else {
			fwrite(p, 1, (size_t)n, out);
			p += n - 1;
		}
	}
	fputc('"', out);
}

void ft_json_begin(struct ft_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->more[0] = 0;
}

static void item(struct ft_json *j, const char *key)
{
	if (j->more[j->depth])
		fputc(',', j->out);
	j->more[j->depth] = 1;
	if (key) {
		ft_json_string(j->out, key);
		fputc(':', j->out);
	}
}

static void open_level(struct ft_json *j, const char *key, char open, char close)
{
	item(j, key);
	fputc(open, j->out);
	if (j->depth + 1 < FT_JSON_DEPTH)
		j->depth++;
	j->close[j->depth] = close;
	j->more[j->depth] = 0;
}

void ft_json_obj(struct ft_json *j, const char *key)
{
	open_level(j, key, '{', '}');
}

void ft_json_arr(struct ft_json *j, const char *key)
{
	open_level(j, key, '[', ']');
}

void ft_json_end(struct ft_json *j)
{
	if (j->depth > 0)
		fputc(j->close[j->depth--], j->out);
}

void ft_json_u64(struct ft_json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void ft_json_int(struct ft_json *j, const char *key, int64_t v)
{
	item(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void ft_json_fixed(struct ft_json *j, const char *key, double v, int places)
{
	item(j, key);
	fprintf(j->out, "%.*f", places, v);
}

void ft_json_g(struct ft_json *j, const char *key, double v)
{
	item(j, key);
	fprintf(j->out, "%.6g", v);
}

void ft_json_hex(struct ft_json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

void ft_json_str(struct ft_json *j, const char *key, const char *s)
{
	item(j, key);
	if (s)
		ft_json_string(j->out, s);
	else
		fputs("null", j->out);
}

void ft_json_bool(struct ft_json *j, const char *key, int v)
{
	item(j, key);
	fputs(v ? "true" : "false", j->out);
}

void ft_json_null(struct ft_json *j, const char *key)
{
	item(j, key);
	fputs("null", j->out);
}
