// SPDX-License-Identifier: GPL-2.0
/* The PNG writer: checksums against known values, and a file read back by hand. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"
#include "tap.h"

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void test_checksums(void)
{
	CHECK(bwap_crc32((const unsigned char *)"123456789", 9, 0) == 0xcbf43926, "crc32 check value");
	CHECK(bwap_adler32((const unsigned char *)"Wikipedia", 9) == 0x11e60398, "adler32 of 'Wikipedia'");
}

/* Write a picture bigger than one stored block, then walk the file. */
static void test_roundtrip(void)
{
	int w = 300, h = 100;	/* 90100 raw bytes: two stored blocks */
	unsigned char *rgb = malloc(w * h * 3), *file, *raw;
	size_t len, raw_len = 0;
	FILE *f;
	char *buf;
	int ok = 1, chunks = 0;

	for (int i = 0; i < w * h * 3; i++)
		rgb[i] = (unsigned char)(i * 7);
	f = open_memstream(&buf, &len);
	CHECK(bwap_png_write(f, rgb, w, h) == 0, "png: written");
	fclose(f);
	file = (unsigned char *)buf;
	CHECK(!memcmp(file, "\x89PNG\r\n\x1a\n", 8), "png: signature");
	CHECK(get32(file + 16) == (uint32_t)w && get32(file + 20) == (uint32_t)h && file[24] == 8 && file[25] == 2,
	      "png: IHDR 300x100, 8-bit RGB");
	raw = malloc((size_t)(w * 3 + 1) * h);
	for (size_t off = 8; off < len;) {
		uint32_t n = get32(file + off);
		const unsigned char *type = file + off + 4, *data = file + off + 8;

		ok &= bwap_crc32(type, 4 + n, 0) == get32(data + n);
		chunks++;
		if (!memcmp(type, "IDAT", 4)) {
			size_t p = 2;

			ok &= data[0] == 0x78 && (data[0] * 256 + data[1]) % 31 == 0;
			for (;;) {
				int final = data[p] & 1;
				size_t bl = data[p + 1] | data[p + 2] << 8, nl = data[p + 3] | data[p + 4] << 8;

				ok &= (bl ^ 0xffff) == nl;
				memcpy(raw + raw_len, data + p + 5, bl);
				raw_len += bl;
				p += 5 + bl;
				if (final)
					break;
			}
			ok &= get32(data + p) == bwap_adler32(raw, raw_len);
		}
		off += 12 + n;
	}
	CHECK(ok && chunks == 3, "png: 3 chunks, CRCs, stored-block lengths and adler32 all valid");
	CHECK(raw_len == (size_t)(w * 3 + 1) * h, "png: inflated size is rows x (1 + 3 x width)");
	for (int y = 0; y < h; y++)
		ok &= raw[y * (w * 3 + 1)] == 0 && !memcmp(raw + y * (w * 3 + 1) + 1, rgb + y * w * 3, w * 3);
	CHECK(ok, "png: every row is filter 0 plus the exact pixels");
	free(raw);
	free(buf);
	free(rgb);
}

static void test_report(void)
{
	struct bwap_matrix m;
	struct bwap_weights w;
	double cap[4] = { 2, 2, 1, 1 };
	char err[256] = "";
	unsigned char sig[8];
	FILE *f;

	bwap_matrix_load(&m, test_data("matrix-4node.txt"), err, sizeof(err));
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(!bwap_report_png("/tmp/bwap-test-report.png", &m, &w, 0x3, err, sizeof(err)),
	      "report: heatmap and bar chart written %s", err);
	f = fopen("/tmp/bwap-test-report.png", "rb");
	CHECK(f && fread(sig, 1, 8, f) == 8 && !memcmp(sig, "\x89PNG", 4), "report: it is a PNG");
	if (f)
		fclose(f);
	unlink("/tmp/bwap-test-report.png");
}

int main(void)
{
	test_checksums();
	test_roundtrip();
	test_report();
	return tap_done();
}
