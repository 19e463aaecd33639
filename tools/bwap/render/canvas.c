// SPDX-License-Identifier: GPL-2.0
/*
 * An RGB canvas and the drawing the pictures need: pixels, rectangles,
 * lines and text in a 3x5 pixel font (upper case, digits, the punctuation
 * of labels and units; lower case is drawn upper case), scaled up.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* One row per entry, top to bottom; bit 2 is the left column. */
static const struct {
	char c;
	unsigned char rows[5];
} font[] = {
	{ '0', { 7, 5, 5, 5, 7 } }, { '1', { 2, 6, 2, 2, 7 } }, { '2', { 7, 1, 7, 4, 7 } },
	{ '3', { 7, 1, 7, 1, 7 } }, { '4', { 5, 5, 7, 1, 1 } }, { '5', { 7, 4, 7, 1, 7 } },
	{ '6', { 7, 4, 7, 5, 7 } }, { '7', { 7, 1, 1, 1, 1 } }, { '8', { 7, 5, 7, 5, 7 } },
	{ '9', { 7, 5, 7, 1, 7 } },
	{ 'A', { 2, 5, 7, 5, 5 } }, { 'B', { 6, 5, 6, 5, 6 } }, { 'C', { 3, 4, 4, 4, 3 } },
	{ 'D', { 6, 5, 5, 5, 6 } }, { 'E', { 7, 4, 6, 4, 7 } }, { 'F', { 7, 4, 6, 4, 4 } },
	{ 'G', { 3, 4, 5, 5, 3 } }, { 'H', { 5, 5, 7, 5, 5 } }, { 'I', { 7, 2, 2, 2, 7 } },
	{ 'J', { 1, 1, 1, 5, 2 } }, { 'K', { 5, 5, 6, 5, 5 } }, { 'L', { 4, 4, 4, 4, 7 } },
	{ 'M', { 5, 7, 7, 5, 5 } }, { 'N', { 6, 5, 5, 5, 5 } }, { 'O', { 2, 5, 5, 5, 2 } },
	{ 'P', { 6, 5, 6, 4, 4 } }, { 'Q', { 2, 5, 5, 6, 3 } }, { 'R', { 6, 5, 6, 5, 5 } },
	{ 'S', { 3, 4, 2, 1, 6 } }, { 'T', { 7, 2, 2, 2, 2 } }, { 'U', { 5, 5, 5, 5, 7 } },
	{ 'V', { 5, 5, 5, 5, 2 } }, { 'W', { 5, 5, 7, 7, 5 } }, { 'X', { 5, 5, 2, 5, 5 } },
	{ 'Y', { 5, 5, 2, 2, 2 } }, { 'Z', { 7, 1, 2, 4, 7 } },
	{ ' ', { 0, 0, 0, 0, 0 } }, { '.', { 0, 0, 0, 0, 2 } }, { ',', { 0, 0, 0, 2, 4 } },
	{ ':', { 0, 2, 0, 2, 0 } }, { '/', { 1, 1, 2, 4, 4 } }, { '(', { 1, 2, 2, 2, 1 } },
	{ ')', { 4, 2, 2, 2, 4 } }, { '=', { 0, 7, 0, 7, 0 } }, { '+', { 0, 2, 7, 2, 0 } },
	{ '<', { 1, 2, 4, 2, 1 } }, { '>', { 4, 2, 1, 2, 4 } }, { '_', { 0, 0, 0, 0, 7 } },
	{ '%', { 5, 1, 2, 4, 5 } }, { '-', { 0, 0, 7, 0, 0 } }, { '~', { 0, 3, 6, 0, 0 } },
	{ '\'', { 2, 2, 0, 0, 0 } }, { '"', { 5, 5, 0, 0, 0 } }, { '#', { 5, 7, 5, 7, 5 } },
	{ '[', { 6, 4, 4, 4, 6 } }, { ']', { 3, 1, 1, 1, 3 } }, { '*', { 0, 5, 2, 5, 0 } },
	{ '?', { 6, 1, 2, 0, 2 } },
};

int bwap_canvas_init(struct bwap_canvas *c, int w, int h, int scale)
{
	c->w = w;
	c->h = h;
	c->scale = scale;
	c->px = malloc((size_t)w * h * 3);
	if (!c->px)
		return -1;
	memset(c->px, 255, (size_t)w * h * 3);
	return 0;
}

void bwap_canvas_free(struct bwap_canvas *c)
{
	free(c->px);
	c->px = NULL;
}

void bwap_canvas_dot(struct bwap_canvas *c, int x, int y, const unsigned char *rgb)
{
	if (x < 0 || y < 0 || x >= c->w || y >= c->h)
		return;
	memcpy(c->px + ((size_t)y * c->w + x) * 3, rgb, 3);
}

void bwap_canvas_rect(struct bwap_canvas *c, int x0, int y0, int w, int h, const unsigned char *rgb)
{
	for (int y = y0; y < y0 + h; y++)
		for (int x = x0; x < x0 + w; x++)
			bwap_canvas_dot(c, x, y, rgb);
}

void bwap_canvas_line(struct bwap_canvas *c, int x0, int y0, int x1, int y1, const unsigned char *rgb)
{
	int n = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);

	for (int i = 0; i <= n; i++)
		bwap_canvas_dot(c, x0 + (n ? (x1 - x0) * i / n : 0), y0 + (n ? (y1 - y0) * i / n : 0), rgb);
}

static const unsigned char *glyph(char ch)
{
	ch = (char)toupper((unsigned char)ch);
	for (size_t i = 0; i < sizeof(font) / sizeof(font[0]); i++)
		if (font[i].c == ch)
			return font[i].rows;
	return glyph('?');
}

int bwap_canvas_text_width(const struct bwap_canvas *c, const char *s)
{
	return (int)strlen(s) * 4 * c->scale;
}

void bwap_canvas_text(struct bwap_canvas *c, int x, int y, const char *s, const unsigned char *rgb)
{
	int k = c->scale;

	for (; *s; s++, x += 4 * k) {
		const unsigned char *g = glyph(*s);

		for (int r = 0; r < 5; r++)
			for (int col = 0; col < 3; col++)
				if (g[r] & (4 >> col))
					bwap_canvas_rect(c, x + col * k, y + r * k, k, k, rgb);
	}
}

void bwap_canvas_text_up(struct bwap_canvas *c, int x, int y, const char *s, const unsigned char *rgb)
{
	int k = c->scale;

	/* rotated a quarter turn: reads bottom to top, starting at (x, y) */
	for (; *s; s++, y -= 4 * k) {
		const unsigned char *g = glyph(*s);

		for (int r = 0; r < 5; r++)
			for (int col = 0; col < 3; col++)
				if (g[r] & (4 >> col))
					bwap_canvas_rect(c, x + r * k, y - col * k, k, k, rgb);
	}
}

int bwap_canvas_write_png(const struct bwap_canvas *c, const char *path, char *err, size_t errlen)
{
	struct bwap_atomic_file af;

	if (bwap_atomic_open(&af, path, err, errlen))
		return -1;
	if (bwap_png_write(af.f, c->px, c->w, c->h)) {
		snprintf(err, errlen, "cannot encode %s as PNG", path);
		bwap_atomic_abort(&af);
		return -1;
	}
	return bwap_atomic_commit(&af, err, errlen);
}
