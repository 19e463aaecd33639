// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl bench -o' and 'bwapctl report --from BENCH.json': GB/s per
 * kernel (groups along x) and placement (a colour each, the legend says
 * which and what made it), the median as the bar, min-max as a whisker,
 * the ratio to interleave-workers above each bar.  Drawn from the JSON
 * alone, so a result measured anywhere draws the same.  EMULATED figures
 * say so in red under the title; their MODELLED GB/s, where the result
 * has them, are one more group at the right, set apart, named so and
 * read on an axis of their own on the right.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "chart.h"

#define W 1100
#define H 640
#define ML 90
#define MR 30
#define MR_MODEL 75	/* room for the MODELLED axis on the right */
#define MT 110
#define MB 150
#define MAX_PLACEMENTS 10
#define MAX_KERNELS 8

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : NULL;
}

static double num(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

int bwap_chart_bench(const char *path, json_object *bench, char *err, size_t errlen)
{
	json_object *pl, *ks;
	const char *kname[MAX_KERNELS], *label = str(bench, "label"), *why = str(bench, "emulated_why");
	double gbs[MAX_PLACEMENTS][MAX_KERNELS], lo[MAX_PLACEMENTS][MAX_KERNELS], hi[MAX_PLACEMENTS][MAX_KERNELS],
	       ratio[MAX_PLACEMENTS][MAX_KERNELS], model[MAX_PLACEMENTS], model_ratio[MAX_PLACEMENTS], top = 0, step,
	       mtop = 0, mstep = 1;
	int np, nk = 0, emulated = label && !strcmp(label, "EMULATED"), nm = 0, groups, mr;
	char sub[512], buf[256];
	struct chart c;

	if (!str(bench, "bwapctl") || strcmp(str(bench, "bwapctl"), "bench") ||
	    !json_object_object_get_ex(bench, "placements", &pl) || !json_object_is_type(pl, json_type_array)) {
		snprintf(err, errlen, "not a 'bwapctl bench' result: no \"bwapctl\": \"bench\" with \"placements\"");
		return -1;
	}
	np = json_object_array_length(pl);
	if (np < 1 || np > MAX_PLACEMENTS) {
		snprintf(err, errlen, "a bench result has 1 to %d placements, this one %d", MAX_PLACEMENTS, np);
		return -1;
	}
	for (int p = 0; p < np; p++) {
		json_object *e = json_object_array_get_idx(pl, p);

		if (!str(e, "name") || !str(e, "made_by") || !json_object_object_get_ex(e, "kernels", &ks) ||
		    !json_object_is_type(ks, json_type_array) ||
		    (p && (int)json_object_array_length(ks) != nk) || json_object_array_length(ks) > MAX_KERNELS ||
		    !json_object_array_length(ks)) {
			snprintf(err, errlen, "placement %d of the bench result lacks a name, made_by or its kernels", p);
			return -1;
		}
		nk = json_object_array_length(ks);
		for (int k = 0; k < nk; k++) {
			json_object *r = json_object_array_get_idx(ks, k);

			kname[k] = str(r, "kernel");
			gbs[p][k] = num(r, "gbs");
			lo[p][k] = num(r, "min");
			hi[p][k] = num(r, "max");
			ratio[p][k] = num(r, "ratio_to_interleave_workers");
			if (!kname[k] || !(gbs[p][k] >= 0) || !(lo[p][k] >= 0) || !(hi[p][k] >= lo[p][k]) ||
			    !isfinite(hi[p][k])) {
				snprintf(err, errlen, "placement '%s', kernel %d: gbs, min and max must be finite, "
					 "0 <= min <= max", str(e, "name"), k);
				return -1;
			}
			top = fmax(top, hi[p][k]);
		}
		/* MODELLED GB/s: every placement has one, or none has */
		model[p] = num(e, "modelled_gbs");
		model_ratio[p] = num(e, "modelled_ratio_to_interleave_workers");
		if (!isnan(model[p])) {
			if (!(model[p] >= 0) || !isfinite(model[p])) {
				snprintf(err, errlen, "placement '%s': modelled_gbs must be finite and >= 0", str(e, "name"));
				return -1;
			}
			mtop = fmax(mtop, model[p]);
			nm++;
		}
	}
	if (nm && nm != np) {
		snprintf(err, errlen, "%d of the %d placements have a modelled_gbs: all or none must", nm, np);
		return -1;
	}
	groups = nk + !!nm;
	mr = nm ? MR_MODEL : MR;
	/* modelled figures have an axis of their own: emulated GB/s are far below them */
	if (nm) {
		if (!(mtop > 0))
			mtop = 1;
		mstep = chart_tick_step(mtop, 6);
		mtop = ceil(mtop / mstep) * mstep;
	}
	if (!(top > 0))
		top = 1;
	step = chart_tick_step(top, 6);
	top = ceil(top / step) * step;
	if (chart_open(&c, path, W, H, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "kernel: %s; workers %s (%d threads, CPUs %s); 3 arrays of %.1f MiB; "
		 "bar = median of %d, whisker = min-max",
		 str(bench, "kernel_mode") ?: "?", str(bench, "workers") ?: "?", (int)num(bench, "threads"),
		 str(bench, "cpus") ?: "?", num(bench, "array_bytes") / 1048576, (int)num(bench, "repeats"));
	chart_title(&c, emulated ? "bwapctl bench: memory bandwidth per page placement (EMULATED)" :
		    "bwapctl bench: memory bandwidth per page placement", sub);
	if (emulated) {
		static const struct rgb red = { 0.80, 0.05, 0.05 };

		snprintf(buf, sizeof(buf), "EMULATED: %s; these are not real bandwidth differences", why ?: "");
		chart_text(&c, 20, 74, 13, 1, 0, &red, buf);
	}
	/* y axis: GB/s, grid at each tick */
	for (double v = 0; v <= top + step / 2; v += step) {
		double y = H - MB - v / top * (H - MT - MB);

		chart_line(&c, ML, y, W - mr, y, 1, &chart_light);
		snprintf(buf, sizeof(buf), "%g", v);
		chart_text(&c, ML - 8, y + 4, 12, 0, 1, &chart_black, buf);
	}
	chart_text_up(&c, 28, MT + (H - MT - MB) / 2.0, 13, &chart_black, "bandwidth, GB/s (10^9 bytes/s)");
	chart_line(&c, ML, MT, ML, H - MB, 1.5, &chart_black);
	chart_line(&c, ML, H - MB, W - mr, H - MB, 1.5, &chart_black);
	{
		double gw = (double)(W - ML - mr) / groups, bw = gw * 0.8 / np;

		for (int k = 0; k < nk; k++) {
			double gx = ML + k * gw + gw * 0.1;

			chart_text(&c, ML + (k + 0.5) * gw, H - MB + 20, 13, 1, 0.5, &chart_black, kname[k]);
			for (int p = 0; p < np; p++) {
				double x = gx + p * bw, y = H - MB - gbs[p][k] / top * (H - MT - MB);
				double ylo = H - MB - lo[p][k] / top * (H - MT - MB);
				double yhi = H - MB - hi[p][k] / top * (H - MT - MB);

				chart_fill_rect(&c, x + 1, y, bw - 2, H - MB - y, &chart_palette[p % 10]);
				chart_line(&c, x + bw / 2, ylo, x + bw / 2, yhi, 1.2, &chart_black);
				chart_line(&c, x + bw / 2 - 3, ylo, x + bw / 2 + 3, ylo, 1.2, &chart_black);
				chart_line(&c, x + bw / 2 - 3, yhi, x + bw / 2 + 3, yhi, 1.2, &chart_black);
				if (isfinite(ratio[p][k])) {
					snprintf(buf, sizeof(buf), "%.2fx", ratio[p][k]);
					chart_text_up(&c, x + bw / 2 + 4, yhi - 6 - chart_text_width(&c, 9, 0, buf) / 2, 9,
						      &chart_grey, buf);
				}
			}
		}
		if (nm) {
			static const struct rgb blue = { 0.05, 0.25, 0.65 };
			double gx = ML + nk * gw + gw * 0.1;

			chart_line(&c, ML + nk * gw, MT, ML + nk * gw, H - MB, 1.2, &chart_grey);
			chart_line(&c, W - mr, MT, W - mr, H - MB, 1.5, &blue);
			for (double v = 0; v <= mtop + mstep / 2; v += mstep) {
				double y = H - MB - v / mtop * (H - MT - MB);

				chart_line(&c, W - mr, y, W - mr + 4, y, 1.2, &blue);
				snprintf(buf, sizeof(buf), "%g", v);
				chart_text(&c, W - mr + 8, y + 4, 12, 0, 0, &blue, buf);
			}
			chart_text_up(&c, W - 14, MT + (H - MT - MB) / 2.0, 13, &blue, "MODELLED GB/s");
			chart_text(&c, ML + (nk + 0.5) * gw, H - MB + 20, 13, 1, 0.5, &blue, "MODELLED");
			for (int p = 0; p < np; p++) {
				double x = gx + p * bw, y = H - MB - model[p] / mtop * (H - MT - MB);

				chart_fill_rect(&c, x + 1, y, bw - 2, H - MB - y, &chart_palette[p % 10]);
				if (isfinite(model_ratio[p])) {
					snprintf(buf, sizeof(buf), "%.2fx", model_ratio[p]);
					chart_text_up(&c, x + bw / 2 + 4, y - 6 - chart_text_width(&c, 9, 0, buf) / 2, 9,
						      &chart_grey, buf);
				}
			}
		}
		chart_text(&c, ML + (W - ML - mr) / 2.0, H - MB + 42, 13, 0, 0.5, &chart_black,
			   nm ? "kernel (STREAM byte counts; sum reads only); MODELLED: the placement model, right "
				"axis; above each bar: ratio to interleave-workers" :
			   "kernel (STREAM byte counts; sum reads only); above each bar: ratio to interleave-workers");
	}
	/* legend: placement, and what made it */
	for (int p = 0; p < np; p++) {
		json_object *e = json_object_array_get_idx(pl, p);
		double x = 20 + (p % 3) * 360, y = H - MB + 75 + (p / 3) * 22;

		snprintf(buf, sizeof(buf), "%s (%s)", str(e, "name"), str(e, "made_by"));
		chart_legend(&c, x, y, &chart_palette[p % 10], buf);
	}
	return chart_close(&c, err, errlen);
}
