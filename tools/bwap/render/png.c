// SPDX-License-Identifier: GPL-2.0
/* PNG files through libpng (zlib-compressed), RGB, 8 bits per channel. */
#include <png.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

int bwap_png_write(FILE *f, const unsigned char *rgb, int width, int height)
{
	png_image image;
	int ok;

	memset(&image, 0, sizeof(image));
	image.version = PNG_IMAGE_VERSION;
	image.width = width;
	image.height = height;
	image.format = PNG_FORMAT_RGB;
	ok = png_image_write_to_stdio(&image, f, 0, rgb, 0, NULL);
	png_image_free(&image);
	return ok ? 0 : -1;
}
