/*
 * shuffle.h: the EVENTS chunk transform (codec 2, docs/FORMAT.md), shared
 * by the recorder (ft_shuffle_slots) and the reader (ft_unshuffle_slots):
 * the first 8 bytes of each slot become the difference from the previous
 * slot's, then byte b of every slot goes to plane b, so zstd sees columns.
 * Blocks of 16 slots are transposed with SSE2 (16x16 bytes, twice); the
 * rest byte by byte. Both directions give the same bytes on any machine.
 */
#ifndef FT_SHUFFLE_H
#define FT_SHUFFLE_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "format.h"

#ifdef __SSE2__
/* r[i] holds row i of a 16x16 byte matrix; afterwards r[j] holds column j.
 * Four rounds of interleaving leave the columns in bit-reversed order. */
static inline void ft_transpose16(__m128i r[16])
{
	static const int bitrev[16] = { 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15 };
	__m128i a[16], b[16];
	for (int i = 0; i < 8; i++) {
		a[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
		a[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 2; j++) {
			b[4 * i + j] = _mm_unpacklo_epi16(a[4 * i + j], a[4 * i + j + 2]);
			b[4 * i + j + 2] = _mm_unpackhi_epi16(a[4 * i + j], a[4 * i + j + 2]);
		}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			a[8 * i + j] = _mm_unpacklo_epi32(b[8 * i + j], b[8 * i + j + 4]);
			a[8 * i + j + 4] = _mm_unpackhi_epi32(b[8 * i + j], b[8 * i + j + 4]);
		}
	for (int j = 0; j < 8; j++) {
		b[j] = _mm_unpacklo_epi64(a[j], a[j + 8]);
		b[j + 8] = _mm_unpackhi_epi64(a[j], a[j + 8]);
	}
	for (int i = 0; i < 16; i++)
		r[i] = b[bitrev[i]];
}
#endif

/* nslots slots at in -> 32 planes of nslots bytes at out */
static inline void ft_shuffle_slots(const unsigned char *in, unsigned char *out, uint64_t nslots)
{
	uint64_t prev = 0, i = 0;
#ifdef __SSE2__
	for (; i + 16 <= nslots; i += 16) {
		__m128i lo[16], hi[16];
		for (int k = 0; k < 16; k++) {
			const unsigned char *s = in + (i + (uint64_t)k) * FT_SLOT_SIZE;
			unsigned char head[16];
			uint64_t ts, d;
			memcpy(head, s, 16);
			memcpy(&ts, head, 8);
			d = ts - prev;
			prev = ts;
			memcpy(head, &d, 8);
			lo[k] = _mm_loadu_si128((const __m128i *)head);
			hi[k] = _mm_loadu_si128((const __m128i *)(s + 16));
		}
		ft_transpose16(lo);
		ft_transpose16(hi);
		for (int b = 0; b < 16; b++) {
			_mm_storeu_si128((__m128i *)(out + (uint64_t)b * nslots + i), lo[b]);
			_mm_storeu_si128((__m128i *)(out + (uint64_t)(b + 16) * nslots + i), hi[b]);
		}
	}
#endif
	for (; i < nslots; i++) {
		unsigned char slot[FT_SLOT_SIZE];
		uint64_t ts, d;
		memcpy(slot, in + i * FT_SLOT_SIZE, FT_SLOT_SIZE);
		memcpy(&ts, slot, 8);
		d = ts - prev;
		prev = ts;
		memcpy(slot, &d, 8);
		for (unsigned b = 0; b < FT_SLOT_SIZE; b++)
			out[b * nslots + i] = slot[b];
	}
}

/* 32 planes of nslots bytes at in -> nslots slots at out */
static inline void ft_unshuffle_slots(const unsigned char *in, unsigned char *out, uint64_t nslots)
{
	uint64_t prev = 0, i = 0;
#ifdef __SSE2__
	for (; i + 16 <= nslots; i += 16) {
		__m128i lo[16], hi[16];
		for (int b = 0; b < 16; b++) {
			lo[b] = _mm_loadu_si128((const __m128i *)(in + (uint64_t)b * nslots + i));
			hi[b] = _mm_loadu_si128((const __m128i *)(in + (uint64_t)(b + 16) * nslots + i));
		}
		ft_transpose16(lo);
		ft_transpose16(hi);
		for (int k = 0; k < 16; k++) {
			unsigned char *s = out + (i + (uint64_t)k) * FT_SLOT_SIZE;
			uint64_t d;
			_mm_storeu_si128((__m128i *)s, lo[k]);
			_mm_storeu_si128((__m128i *)(s + 16), hi[k]);
			memcpy(&d, s, 8);
			prev += d;
			memcpy(s, &prev, 8);
		}
	}
#endif
	for (; i < nslots; i++) {
		unsigned char *slot = out + i * FT_SLOT_SIZE;
		uint64_t d;
		for (unsigned b = 0; b < FT_SLOT_SIZE; b++)
			slot[b] = in[b * nslots + i];
		memcpy(&d, slot, 8);
		prev += d;
		memcpy(slot, &prev, 8);
	}
}

#endif
