// SPDX-License-Identifier: GPL-2.0
/*
 * Pictures: a PNG read back through libpng pixel for pixel, the font, and
 * the report's size and labels (compressed: kilobytes, not megabytes).
 */
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render.h"
#include "tap.h"

/* Read an RGB PNG; malloc()ed pixels or NULL. */
static unsigned char *read_png(const char *path, int *w, int *h)
{
	png_image image;
	unsigned char *px;

	memset(&image, 0, sizeof(image));
	image.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&image, path))
		return NULL;
	image.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(image));
	if (!px || !png_image_finish_read(&image, NULL, px, 0, NULL)) {
		free(px);
		png_image_free(&image);
		return NULL;
	}
	*w = image.width;
	*h = image.height;
	return px;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

static void test_roundtrip(void)
{
	struct bwap_canvas c;
	unsigned char *back;
	char err[5000] = "";
	int w = 0, h = 0;

	bwap_canvas_init(&c, 300, 100, 1);
	for (int i = 0; i < 300 * 100 * 3; i++)
		c.px[i] = (unsigned char)(i * 7 + i / 300);
	CHECK(!bwap_canvas_write_png(&c, "/tmp/bwap-test-rt.png", err, sizeof(err)), "png: written %s", err);
	back = read_png("/tmp/bwap-test-rt.png", &w, &h);
	CHECK(back && w == 300 && h == 100, "png: libpng reads it back, 300x100");
	CHECK(back && !memcmp(back, c.px, 300 * 100 * 3), "png: every pixel as written");
	free(back);
	bwap_canvas_free(&c);
	unlink("/tmp/bwap-test-rt.png");
}

/* 'A' at scale 1 is .#. / #.# / ### / #.# / #.#; lower case draws the same. */
static void test_font(void)
{
	static const char *a[5] = { ".#.", "#.#", "###", "#.#", "#.#" };
	static const unsigned char black[3] = { 0, 0, 0 };
	struct bwap_canvas c;
	int ok = 1, same = 1;

	bwap_canvas_init(&c, 16, 8, 1);
	bwap_canvas_text(&c, 0, 0, "Aa", black);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 3; x++) {
			int ink = !c.px[(y * 16 + x) * 3];

			ok &= ink == (a[y][x] == '#');
			same &= ink == !c.px[(y * 16 + x + 4) * 3];
		}
	CHECK(ok, "font: 'A' has the right pixels");
	CHECK(same, "font: lower case 'a' is drawn as 'A'");
	CHECK(bwap_canvas_text_width(&c, "GB/S") == 16, "font: 4 pixels per character at scale 1");
	bwap_canvas_free(&c);
}

static void test_report(void)
{
	struct bwap_matrix m;
	struct bwap_weights w;
	double cap[4] = { 2, 2, 1, 1 };
	char err[5000] = "";
	unsigned char *px;
	int pw = 0, ph = 0, ink = 0;
	long size;

	bwap_matrix_load(&m, test_data("matrix-4node.txt"), err, sizeof(err));
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(!bwap_report_png("/tmp/bwap-test-report.png", &m, &w, 0x3, err, sizeof(err)),
	      "report: heatmap and bar chart written %s", err);
	size = file_size("/tmp/bwap-test-report.png");
	CHECK(size > 0 && size < 20000, "report: 4 nodes compress to %ld bytes (< 20 KB)", size);
	px = read_png("/tmp/bwap-test-report.png", &pw, &ph);
	CHECK(px && pw >= 600 && ph >= 350, "report: %dx%d pixels", pw, ph);
	/* the title line (y 24..34) has text in it */
	for (int y = 24; px && y < 34; y++)
		for (int x = 0; x < pw; x++)
			ink += !px[(y * pw + x) * 3];
	CHECK(ink > 200, "report: the title is drawn (%d black pixels)", ink);
	free(px);
	unlink("/tmp/bwap-test-report.png");

	/* 64 nodes: was 48 MB as stored deflate */
	bwap_matrix_init(&m, 64);
	for (int r = 0; r < 64; r++)
		for (int c = 0; c < 64; c++)
			m.bw[r][c] = r == c ? 20000 : 5000 + 100 * ((r + c) % 50);
	snprintf(m.source, sizeof(m.source), "64-node test matrix");
	CHECK(!bwap_report_png("/tmp/bwap-test-report64.png", &m, NULL, 0x1, err, sizeof(err)),
	      "report: 64-node heatmap written %s", err);
	size = file_size("/tmp/bwap-test-report64.png");
	CHECK(size > 0 && size < 1000000, "report: 64 nodes compress to %ld bytes (< 1 MB)", size);
	unlink("/tmp/bwap-test-report64.png");
}

int main(void)
{
	test_roundtrip();
	test_font();
	test_report();
	return tap_done();
}
