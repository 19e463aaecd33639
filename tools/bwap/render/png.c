// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal PNG writer: 8-bit RGB, no filtering, and a zlib stream made of
 * "stored" (uncompressed) deflate blocks.  Files are bigger than they need
 * to be, but every viewer reads them and there is no dependency.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

uint32_t bwap_crc32(const unsigned char *buf, size_t len, uint32_t crc)
{
	static uint32_t table[256];
	static int ready;

	if (!ready) {
		for (uint32_t n = 0; n < 256; n++) {
			uint32_t c = n;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[n] = c;
		}
		ready = 1;
	}
	crc ^= 0xffffffffu;
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

uint32_t bwap_adler32(const unsigned char *buf, size_t len)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < len; i++) {
		a = (a + buf[i]) % 65521;
		b = (b + a) % 65521;
	}
	return (b << 16) | a;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static int write_chunk(FILE *f, const char *type, const unsigned char *data, size_t len)
{
	unsigned char hdr[8], crcb[4];
	uint32_t crc;

	put32(hdr, (uint32_t)len);
	memcpy(hdr + 4, type, 4);
	crc = bwap_crc32(hdr + 4, 4, 0);
	crc = bwap_crc32(data, len, crc);
	put32(crcb, crc);
	if (fwrite(hdr, 1, 8, f) != 8 || (len && fwrite(data, 1, len, f) != len) ||
	    fwrite(crcb, 1, 4, f) != 4)
		return -1;
	return 0;
}

int bwap_png_write(FILE *f, const unsigned char *rgb, int width, int height)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t row = (size_t)width * 3 + 1, raw_len = row * height;
	size_t blocks = (raw_len + 65534) / 65535, z_len = 2 + blocks * 5 + raw_len + 4;
	unsigned char ihdr[13], *raw, *z, *p;
	int ret = -1;

	if (width <= 0 || height <= 0) {
		errno = EINVAL;
		return -1;
	}
	raw = malloc(raw_len);
	z = malloc(z_len);
	if (!raw || !z)
		goto out;
	for (int y = 0; y < height; y++) {
		raw[y * row] = 0;	/* filter type None */
		memcpy(raw + y * row + 1, rgb + (size_t)y * width * 3, (size_t)width * 3);
	}
	p = z;
	*p++ = 0x78;	/* deflate, 32K window */
	*p++ = 0x01;	/* no preset dictionary; (0x78 << 8 | 0x01) % 31 == 0 */
	for (size_t off = 0; off < raw_len;) {
		size_t n = raw_len - off > 65535 ? 65535 : raw_len - off;

		*p++ = off + n == raw_len;	/* BFINAL, BTYPE 00 = stored */
		*p++ = n & 0xff;
		*p++ = n >> 8;
		*p++ = ~n & 0xff;
		*p++ = (~n >> 8) & 0xff;
		memcpy(p, raw + off, n);
		p += n;
		off += n;
	}
	put32(p, bwap_adler32(raw, raw_len));
	p += 4;
	put32(ihdr, width);
	put32(ihdr + 4, height);
	ihdr[8] = 8;	/* bit depth */
	ihdr[9] = 2;	/* colour type RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	if (fwrite(sig, 1, 8, f) != 8 || write_chunk(f, "IHDR", ihdr, 13) ||
	    write_chunk(f, "IDAT", z, (size_t)(p - z)) || write_chunk(f, "IEND", NULL, 0))
		goto out;
	ret = 0;
out:
	free(raw);
	free(z);
	return ret;
}
