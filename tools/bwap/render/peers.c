// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl report --peers REPORT.txt': rebalance-bench --peers' report
 * (peers_parse.c) as two stacked panels, pages moved / the fewest moves to
 * the method's own goal (DAMON: a fresh fault's layout; the others: the
 * per-node shares) over instructions / the kernel's, each with a group of
 * bars per scenario and a colour per method, the printed ratio over each
 * bar ("*" on a folio-blind row).  A row with no ratio to its own goal (a
 * layout row of a report from before the "min" column) is drawn n/a.  A panel whose
 * values span more than a factor of 10 is drawn on a log scale (1-2-5
 * ticks); its floor sits one tick under the smallest value so that the
 * reference bars (1.00x) still show.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart.h"

#define W 1100
#define H 860
#define ML 90
#define MR 30
#define PANEL_TOP0 130		/* the first panel's title baseline */
#define PANEL_STEP 365		/* from one panel to the next */
#define PANEL_H 255		/* the plot, label band included */
#define LABEL_BAND 52		/* above the top tick: room for labels over the tallest bar */
#define FOOT_Y (H - 48)

/* The 1-2-5 value at or above x (up) or strictly below it (!up); x > 0. */
static double step125(double x, int up)
{
	static const double mant[] = { 1, 2, 5 };
	double e = pow(10, floor(log10(x)) - 1), best = up ? INFINITY : 0;

	for (int d = 0; d < 3; d++, e *= 10)
		for (int i = 0; i < 3; i++) {
			double v = mant[i] * e;

			if (up && v >= x * (1 - 1e-12) && v < best)
				best = v;
			if (!up && v < x * (1 - 1e-12) && v > best)
				best = v;
		}
	return best;
}

struct axis {
	int log;
	double lo, hi;		/* values at the bottom and at the top tick */
	double bottom, top;	/* their y */
};

static double ypos(const struct axis *a, double v)
{
	double f;

	if (a->log)
		f = v > 0 ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo)) : 0;
	else
		f = (v - a->lo) / (a->hi - a->lo);
	return a->bottom - fmax(0, f) * (a->bottom - a->top);
}

static const double *value(const struct bwap_peers_row *row, int panel)
{
	return panel ? &row->per_kernel : &row->per_min;
}

/* A bar to draw: measured, and in the first panel a ratio to the method's own goal. */
static int drawn(const struct bwap_peers_row *row, int panel)
{
	return row->have && *value(row, panel) >= 0;
}

/* A report's rows without a ratio to their own goal. */
static int nr_not_comparable(const struct bwap_peers_report *r)
{
	int n = 0;

	for (int s = 0; s < r->nr_scenarios; s++)
		for (int m = 0; m < r->nr_methods; m++)
			n += r->sc[s].row[m].have && r->sc[s].row[m].per_min < 0;
	return n;
}

static int nr_folio_blind(const struct bwap_peers_report *r)
{
	int n = 0;

	for (int s = 0; s < r->nr_scenarios; s++)
		for (int m = 0; m < r->nr_methods; m++)
			n += r->sc[s].row[m].have && r->sc[s].row[m].folio_blind;
	return n;
}

/* "1.77x", "1.77x*" on a folio-blind row */
static void label(char *buf, size_t len, const struct bwap_peers_row *row, int panel)
{
	snprintf(buf, len, "%.2fx%s", *value(row, panel), row->folio_blind ? "*" : "");
}

static void draw_panel(struct chart *c, const struct bwap_peers_report *r, int panel, double y0)
{
	static const char *const titles[2] = {
		"pages moved / the fewest to the method's own goal (DAMON: a fresh fault's layout; others: the shares)",
		"instructions / the kernel's (same scenario)",
	};
	const struct rgb ref = { 0.30, 0.30, 0.30 };
	double vmin = INFINITY, vmax = 0, gw, bw;
	struct axis a = { .bottom = y0 + PANEL_H, .top = y0 + LABEL_BAND };
	int ns = r->nr_scenarios, nm = r->nr_methods, up = 0;
	char buf[160];

	for (int s = 0; s < ns; s++)
		for (int m = 0; m < nm; m++) {
			const struct bwap_peers_row *row = &r->sc[s].row[m];

			if (!drawn(row, panel))
				continue;
			vmax = fmax(vmax, *value(row, panel));
			if (*value(row, panel) > 0)
				vmin = fmin(vmin, *value(row, panel));
		}
	if (!(vmax > 0))
		vmax = 1;
	if (!isfinite(vmin))
		vmin = vmax;
	a.log = vmax / vmin > 10;
	if (a.log) {
		a.lo = step125(vmin, 0);
		a.hi = step125(vmax, 1);
	} else {
		double step = chart_tick_step(vmax, 5);

		a.lo = 0;
		a.hi = ceil(vmax / step - 1e-9) * step;
	}
	snprintf(buf, sizeof(buf), "%s%s", panel && !strcmp(r->unit, "ns") ?
		 "guest time / the kernel's (same scenario)" : titles[panel], a.log ? " (log scale)" : "");
	chart_text(c, ML, y0 - 2, 14, 1, 0, &chart_black, buf);
	/* grid and ticks */
	if (a.log) {
		for (double e = pow(10, floor(log10(a.lo))); e <= a.hi * 1.0001; e *= 10)
			for (int i = 0; i < 3; i++) {
				double v = (i == 0 ? 1 : i == 1 ? 2 : 5) * e, y;

				if (v < a.lo * 0.9999 || v > a.hi * 1.0001)
					continue;
				y = ypos(&a, v);
				chart_line(c, ML, y, W - MR, y, 1, &chart_light);
				snprintf(buf, sizeof(buf), "%g", v);
				chart_text(c, ML - 8, y + 4, 12, 0, 1, &chart_black, buf);
			}
	} else {
		double step = chart_tick_step(vmax, 5);

		for (double v = 0; v <= a.hi + step / 2; v += step) {
			double y = ypos(&a, v);

			chart_line(c, ML, y, W - MR, y, 1, &chart_light);
			snprintf(buf, sizeof(buf), "%g", v);
			chart_text(c, ML - 8, y + 4, 12, 0, 1, &chart_black, buf);
		}
	}
	chart_text_up(c, 30, (a.top + a.bottom) / 2, 13, &chart_black,
		      panel ? (strcmp(r->unit, "ns") ? "x the kernel's instructions" : "x the kernel's time") :
			      "x the minimum");
	chart_line(c, ML, y0 + 8, ML, a.bottom, 1.5, &chart_black);
	chart_line(c, ML, a.bottom, W - MR, a.bottom, 1.5, &chart_black);
	gw = (double)(W - ML - MR) / ns;
	bw = fmin(gw * 0.8 / nm, 72);	/* few scenarios: bars no wider than a label needs */
	/* one orientation for every label: upright where the widest fits its bar */
	for (int s = 0; s < ns; s++)
		for (int m = 0; m < nm; m++) {
			label(buf, sizeof(buf), &r->sc[s].row[m], panel);
			up |= chart_text_width(c, 10, 0, buf) > bw - 2;
		}
	for (int s = 0; s < ns; s++) {
		const struct bwap_peers_scenario *sc = &r->sc[s];
		double cx = ML + (s + 0.5) * gw, gx = cx - nm * bw / 2, size = 10;

		for (int m = 0; m < nm; m++) {
			const struct bwap_peers_row *row = &sc->row[m];
			double x = gx + m * bw, y;

			if (!drawn(row, panel)) {
				chart_text(c, x + bw / 2, a.bottom - 4, 9, 0, 0.5, &chart_grey, "n/a");
				continue;
			}
			y = ypos(&a, *value(row, panel));
			chart_fill_rect(c, x + 1, y, bw - 2, a.bottom - y, &chart_palette[m % 10]);
			label(buf, sizeof(buf), row, panel);
			if (up)
				chart_text_up(c, x + bw / 2 + 4, y - 5 - chart_text_width(c, 10, 0, buf) / 2, 10,
					      &chart_black, buf);
			else
				chart_text(c, x + bw / 2, y - 4, 10, 0, 0.5, &chart_black, buf);
		}
		/* the scenario: its name, what it changes, and the reference's absolute figure */
		chart_text(c, cx, a.bottom + 17, 12, 1, 0.5, &chart_black, sc->name);
		if (panel)
			snprintf(buf, sizeof(buf), "kernel: %lld %s", sc->row[0].instr, r->unit);
		else
			snprintf(buf, sizeof(buf), "(%s) shares min %ld of %ld", sc->what, sc->minimum, sc->pages);
		while (size > 7 && chart_text_width(c, size, 0, buf) > gw - 4)
			size -= 0.5;
		chart_text(c, cx, a.bottom + 32, size, 0, 0.5, &chart_grey, buf);
	}
	/* the reference: 1.00x is the minimum to the method's own goal, or the kernel */
	if (a.lo < 1 && a.hi > 1)
		chart_line(c, ML, ypos(&a, 1), W - MR, ypos(&a, 1), 1, &ref);
}

/* Text from x, at size or smaller (down to 8), so that it ends MR short of the right edge. */
static void fit_text(struct chart *c, double x, double y, double size, int bold, const struct rgb *col,
		     const char *text)
{
	while (size > 8 && x + chart_text_width(c, size, bold, text) > W - MR)
		size -= 0.5;
	chart_text(c, x, y, size, bold, 0, col, text);
}

int bwap_chart_peers(const char *path, const struct bwap_peers_report *r, char *err, size_t errlen)
{
	const char *base = strrchr(r->source_name, '/');
	char title[300], sub[600], buf[400];
	int n = 0, icount = !strcmp(r->unit, "instr");
	struct chart c;
	double x;

	if (r->nr_scenarios < 1 || r->nr_methods < 1 || r->nr_scenarios > BWAP_PEERS_MAX_SCENARIOS ||
	    r->nr_methods > BWAP_PEERS_MAX_METHODS) {
		snprintf(err, errlen, "a peers report to draw has 1 to %d scenarios and 1 to %d methods",
			 BWAP_PEERS_MAX_SCENARIOS, BWAP_PEERS_MAX_METHODS);
		return -1;
	}
	if (chart_open(&c, path, W, H, err, errlen))
		return -1;
	n = snprintf(title, sizeof(title), "Rebalance after a weight change: ");
	for (int m = 0; m < r->nr_methods; m++)
		n += snprintf(title + n, sizeof(title) - n, "%s%s", m ? (m == r->nr_methods - 1 ? " and " : ", ") : "",
			      r->method[m]);
	if (r->base[0])
		n = snprintf(sub, sizeof(sub), "kernel %s (%s), variant %s; machine %s, ", r->base,
			     r->source[0] ? r->source : "?", r->variant, r->topology);
	else
		n = snprintf(sub, sizeof(sub), "kernel and machine not in the report (no run-bench header); ");
	snprintf(sub + n, sizeof(sub) - n, "%d nodes, workers on node %d; median of %d; TAP %d of %d ok",
		 r->nodes, r->worker_node, r->repeats, r->tap_ok, r->tap_ok + r->tap_not_ok);
	/* the report's name on a line of its own: with the rest it ran past the right edge */
	snprintf(buf, sizeof(buf), "report: %s", base ? base + 1 : r->source_name);
	fit_text(&c, 20, 30, 18, 1, &chart_black, title);
	fit_text(&c, 20, 50, 12, 0, &chart_grey, sub);
	fit_text(&c, 20, 66, 11, 0, &chart_grey, buf);
	/* legend: a colour per method */
	x = 20;
	for (int m = 0; m < r->nr_methods; m++)
		x = chart_legend(&c, x, 90, &chart_palette[m % 10], r->method[m]);
	chart_text(&c, x, 90, 12, 0, 0, &chart_grey,
		   nr_not_comparable(r) ? "(n/a: not measured, or no ratio to its own goal)" : "(n/a: not measured)");
	for (int p = 0; p < 2; p++)
		draw_panel(&c, r, p, PANEL_TOP0 + p * PANEL_STEP);
	if (icount)
		snprintf(buf, sizeof(buf), "Instructions are guest instructions under QEMU -icount (run-vm --icount): "
			 "work on a modelled machine, not bandwidth or time.");
	else
		snprintf(buf, sizeof(buf), "Times are guest ns without -icount: a modelled machine, not bandwidth; "
			 "run-bench --peers counts instructions instead.");
	chart_text(&c, 20, FOOT_Y, 11, 0, 0, &chart_black, buf);
	chart_text(&c, 20, FOOT_Y + 17, 11, 0, 0, &chart_grey,
		   "Moved: pages that changed node (a THP counts 512). Minimum: the fewest moves that reach the "
		   "method's own goal. Dark line: 1x, the reference.");
	buf[0] = '\0';
	if (nr_not_comparable(r))
		snprintf(buf, sizeof(buf), "A report from before the \"min\" column: its DAMON /min divided by the "
			 "shares' minimum, not DAMON's goal, so it is not drawn (n/a).%s",
			 nr_folio_blind(r) ? " " : "");
	if (nr_folio_blind(r))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 "*: folio-blind, it ignores folio sizes (plans in base pages; a THP moves whole, some twice).");
	if (buf[0])
		fit_text(&c, 20, FOOT_Y + 34, 11, 0, &chart_grey, buf);
	return chart_close(&c, err, errlen);
}
