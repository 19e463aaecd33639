// SPDX-License-Identifier: GPL-2.0
/*
 * rebalance-bench --peers' text report (guest/rebalance-bench.c, peers()),
 * as scripts/run-bench --peers saves it, read for 'bwapctl report --peers'.
 * In both builds, like format.c: only the drawing needs cairo.
 *
 * Strict, because the report is the bench's own printf output: a line it
 * does not print is an error naming the line, and each row's ratios are
 * checked against its counts, so that a cut or hand-edited report is
 * refused rather than drawn wrong.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* More pages than rebalance-bench maps (32 THPs) by far; a bound for sanity. */
#define MAX_PAGES (1L << 30)
/* A printed ratio ("%.2fx") is within half its last digit of the counts' */
#define RATIO_TOL 0.0051

struct parser {
	const char *name;
	int lineno;
	const char *line;
	char *err;
	size_t errlen;
	int cur;	/* the scenario the next rows belong to, -1 before the first */
	int in_table;	/* its column header was seen */
	int columns;	/* 0: no column header yet; 1: without "min" (before it); 2: with it */
	const char *note;	/* the method whose "#   NAME: ..." note block this is, or NULL */
};

static int bad(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "NAME:LINE: why: 'the line'" */
static int bad(struct parser *p, const char *fmt, ...)
{
	char why[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%d: %s: '%.140s'", p->name, p->lineno, why, p->line);
	return -1;
}

/* Copy s up to the first delim into out; the text after delim, or NULL if none or it does not fit. */
static const char *upto(const char *s, const char *delim, char *out, size_t len)
{
	const char *e = strstr(s, delim);

	if (!e || e == s || (size_t)(e - s) >= len)
		return NULL;
	memcpy(out, s, e - s);
	out[e - s] = '\0';
	return e + strlen(delim);
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* run-bench's "# kernel base BASE (SOURCE VERSION), variant VARIANT, topology NAME" */
static int parse_kernel(struct parser *p, struct bwap_peers_report *r, const char *s)
{
	const char *q = upto(s, " (", r->base, sizeof(r->base));
	size_t n;

	if (q)
		q = upto(q, "), variant ", r->source, sizeof(r->source));
	if (q)
		q = upto(q, ", topology ", r->variant, sizeof(r->variant));
	if (!q || !*q || strlen(q) >= sizeof(r->topology) || strchr(q, ' '))
		return bad(p, "not '# kernel base BASE (SOURCE), variant VARIANT, topology NAME' as "
			   "run-bench --peers writes it");
	strcpy(r->topology, q);
	/* an unknown package version leaves "linux-source-7.3 " */
	for (n = strlen(r->source); n && r->source[n - 1] == ' '; n--)
		r->source[n - 1] = '\0';
	return 0;
}

/* "# rebalance-bench --peers: 4 nodes, workers on CPU 0 (node 0), 3 repeats," */
static int parse_bench(struct parser *p, struct bwap_peers_report *r)
{
	int n = -1;

	if (r->nodes)
		return bad(p, "a second rebalance-bench --peers header: one report per file");
	if (sscanf(p->line, "# rebalance-bench --peers: %d nodes, workers on CPU %d (node %d), %d repeats,%n",
		   &r->nodes, &r->worker_cpu, &r->worker_node, &r->repeats, &n) != 4 || n != (int)strlen(p->line))
		return bad(p, "not '# rebalance-bench --peers: N nodes, workers on CPU C (node N), R repeats,'");
	if (r->nodes < 1 || r->nodes > BWAP_PEERS_MAX_NODES || r->worker_node < 0 ||
	    r->worker_node >= r->nodes || r->worker_cpu < 0 || r->repeats < 1 || r->repeats > 1000)
		return bad(p, "nodes must be 1 to %d, the workers' node one of them, repeats 1 to 1000",
			   BWAP_PEERS_MAX_NODES);
	return 0;
}

/* The scenario just finished has its rows, the kernel's among them. */
static int scenario_done(struct parser *p, struct bwap_peers_report *r)
{
	struct bwap_peers_scenario *sc;

	if (p->cur < 0)
		return 0;
	sc = &r->sc[p->cur];
	if (!p->in_table || !r->nr_methods || !sc->row[0].have) {
		snprintf(p->err, p->errlen, "%s: scenario '%s' has no rows (or no kernel row): the report is cut "
			 "short or edited", p->name, sc->name);
		return -1;
	}
	return 0;
}

/*
 * "# NAME (WHAT): OLD -> NEW, N pages[, THP always], minimum M moved; fresh fault under NEW:"
 */
static int parse_scenario(struct parser *p, struct bwap_peers_report *r)
{
	const char *form = "not '# NAME (WHAT): OLD -> NEW, N pages[, THP always], minimum M moved; "
			   "fresh fault under NEW:'";
	struct bwap_peers_scenario *sc;
	const char *q;
	int n = -1;

	if (!r->nodes)
		return bad(p, "a scenario before the '# rebalance-bench --peers:' header");
	if (scenario_done(p, r))
		return -1;
	if (r->nr_scenarios == BWAP_PEERS_MAX_SCENARIOS)
		return bad(p, "more than %d scenarios", BWAP_PEERS_MAX_SCENARIOS);
	sc = &r->sc[r->nr_scenarios];
	memset(sc, 0, sizeof(*sc));
	q = upto(p->line + 2, " (", sc->name, sizeof(sc->name));
	if (q)
		q = upto(q, "): ", sc->what, sizeof(sc->what));
	if (q)
		q = upto(q, " -> ", sc->old_w, sizeof(sc->old_w));
	if (q)
		q = upto(q, ", ", sc->new_w, sizeof(sc->new_w));
	if (!q || strchr(sc->name, ' ') || sscanf(q, "%ld pages%n", &sc->pages, &n) != 1 || n < 0)
		return bad(p, "%s", form);
	q += n;
	if (starts(q, ", THP always")) {
		sc->thp = 1;
		q += strlen(", THP always");
	}
	n = -1;
	if (sscanf(q, ", minimum %ld moved; fresh fault under NEW:%n", &sc->minimum, &n) != 1 ||
	    n != (int)strlen(q))
		return bad(p, "%s", form);
	if (sc->pages < 1 || sc->pages > MAX_PAGES || sc->minimum < 0 || sc->minimum > sc->pages)
		return bad(p, "pages must be 1 to %ld and the minimum 0 to the pages", MAX_PAGES);
	for (int s = 0; s < r->nr_scenarios; s++)
		if (!strcmp(r->sc[s].name, sc->name))
			return bad(p, "scenario '%s' a second time", sc->name);
	p->cur = r->nr_scenarios++;
	p->in_table = 0;
	p->note = NULL;
	return 0;
}

/*
 * "# method      moved    min   /min ..." exactly as peers() prints it, for
 * instr or ns; or as it printed it before the "min" column, when "/min"
 * divided every row by the shares' minimum.
 */
static int parse_columns(struct parser *p, struct bwap_peers_report *r)
{
	static const char *const units[] = { "instr", "ns" };
	char want[200];

	if (p->cur < 0 || p->in_table)
		return bad(p, "a column header outside a scenario's header");
	for (int c = 1; c <= 2; c++)
		for (int u = 0; u < 2; u++) {
			snprintf(want, sizeof(want), "# %-10s %6s%s %6s %6s %6s %10s %7s %6s %-6s %10s %13s %9s %-19s",
				 "method", "moved", c == 2 ? "    min" : "", "/min", "shares", "layout", units[u],
				 "/kernel", "/moved", "goal", "reached", "win 64 / 512", "refault", "final per node");
			if (strcmp(p->line, want))
				continue;
			if (r->unit[0] && strcmp(r->unit, units[u]))
				return bad(p, "%s here, %s in the scenarios before", units[u], r->unit);
			if (p->columns && p->columns != c)
				return bad(p, "a column header %s \"min\", the scenarios before %s", c == 2 ? "with" : "without",
					   c == 2 ? "without" : "with");
			snprintf(r->unit, sizeof(r->unit), "%s", units[u]);
			p->columns = c;
			r->goal_min_column = c == 2;
			p->in_table = 1;
			return 0;
		}
	return bad(p, "not the column header rebalance-bench --peers prints (method moved min /min shares layout "
		   "instr ...)");
}

static int method_index(struct parser *p, struct bwap_peers_report *r, const char *name)
{
	for (int m = 0; m < r->nr_methods; m++)
		if (!strcmp(r->method[m], name))
			return m;
	if (!r->nr_methods && strcmp(name, "kernel"))
		return bad(p, "the first method is not the kernel, whose instructions the others' /kernel divide by");
	if (r->nr_methods == BWAP_PEERS_MAX_METHODS)
		return bad(p, "more than %d methods", BWAP_PEERS_MAX_METHODS);
	snprintf(r->method[r->nr_methods], sizeof(r->method[0]), "%s", name);
	return r->nr_methods++;
}

/*
 * "  NAME(%-10s) moved /min x shares layout instr /kernel x /moved goal
 *  reached win64 / win512 refault yes|no a/b/c/d", or "  NAME n/a"
 */
static int parse_row(struct parser *p, struct bwap_peers_report *r)
{
	struct bwap_peers_scenario *sc;
	struct bwap_peers_row *row, *k;
	char name[16], yes[8];
	const char *q;
	long sum = 0;
	int m, n = -1, len;

	if (p->cur < 0 || !p->in_table)
		return bad(p, "a method's row before its scenario's column header");
	sc = &r->sc[p->cur];
	k = &sc->row[0];
	if (strlen(p->line) < 14 || p->line[12] != ' ')
		return bad(p, "not a method's row: a name of up to 10 characters, then its figures");
	memcpy(name, p->line + 2, 10);
	for (len = 10; len && name[len - 1] == ' '; len--)
		;
	name[len] = '\0';
	m = method_index(p, r, name);
	if (m < 0)
		return -1;
	if (m && !k->have)
		return bad(p, "a row before the kernel's, whose instructions its /kernel divides by");
	row = &sc->row[m];
	if (row->have || row->na)
		return bad(p, "method '%s' a second time in scenario '%s'", name, sc->name);
	q = p->line + 12 + strspn(p->line + 12, " ");
	if (!strcmp(q, "n/a")) {
		if (!m)
			return bad(p, "the kernel's row is n/a: nothing to compare with");
		row->na = 1;
		return 0;
	}
	if (r->goal_min_column) {
		if (sscanf(q, "%ld %ld %lfx %ld %ld %lld %lfx %lf %7s %n", &row->moved, &row->goal_min, &row->per_min,
			   &row->off, &row->layout, &row->instr, &row->per_kernel, &row->per_moved, row->goal,
			   &n) != 9 || n < 0)
			return bad(p, "not 'moved min /min x shares layout %s /kernel x /moved goal' at the start of a row",
				   r->unit);
	} else if (sscanf(q, "%ld %lfx %ld %ld %lld %lfx %lf %7s %n", &row->moved, &row->per_min, &row->off,
			  &row->layout, &row->instr, &row->per_kernel, &row->per_moved, row->goal, &n) != 8 || n < 0) {
		return bad(p, "not 'moved /min x shares layout %s /kernel x /moved goal' at the start of a row",
			   r->unit[0] ? r->unit : "instr");
	}
	if (strcmp(row->goal, "shares") && strcmp(row->goal, "layout"))
		return bad(p, "the goal '%s' is neither 'shares' nor 'layout'", row->goal);
	q += n;
	if (starts(q, "never")) {
		row->reached_ms = -1;
		q += strlen("never");
	} else {
		n = -1;
		if (sscanf(q, "%lf ms%n", &row->reached_ms, &n) != 1 || n < 0)
			return bad(p, "reached is neither 'never' nor 'T ms'");
		if (!isfinite(row->reached_ms) || row->reached_ms < 0)
			return bad(p, "reached must be finite and >= 0 ms");
		q += n;
	}
	n = -1;
	if (sscanf(q, " %lf / %lf %ld %3s %n", &row->win[0], &row->win[1], &row->refault, yes, &n) != 4 || n < 0)
		return bad(p, "not 'win64 / win512 refault yes|no' after reached");
	q += n;
	for (int node = 0; node < r->nodes; node++) {
		char *end;

		errno = 0;
		row->final[node] = strtol(q, &end, 10);
		if (end == q || errno || row->final[node] < 0 || row->final[node] > sc->pages ||
		    *end != (node == r->nodes - 1 ? '\0' : '/'))
			return bad(p, "the final pages per node are not %d counts 'a/b/...' of 0 to %ld",
				   r->nodes, sc->pages);
		sum += row->final[node];
		q = end + (*end == '/');
	}
	/* ranges, then the ratios against the counts they are made of */
	if (sum != sc->pages)
		return bad(p, "the final pages per node add up to %ld, not the scenario's %ld pages", sum, sc->pages);
	if (row->moved < 0 || row->moved > sc->pages || row->off < 0 || row->off > sc->pages ||
	    row->layout < 0 || row->layout > sc->pages || row->refault < 0 || row->refault > sc->pages)
		return bad(p, "moved, shares, layout and refault must be 0 to the scenario's %ld pages", sc->pages);
	if (row->instr < 0 || (!m && row->instr == 0))
		return bad(p, "%s must be >= 0 (the kernel's > 0)", r->unit);
	if (!isfinite(row->per_min) || !isfinite(row->per_kernel) || !isfinite(row->per_moved) ||
	    !isfinite(row->win[0]) || !isfinite(row->win[1]) || row->per_min < 0 || row->per_kernel < 0 ||
	    row->per_moved < 0 || row->win[0] < 0 || row->win[1] < 0)
		return bad(p, "/min, /kernel, /moved and the windows must be finite and >= 0");
	if (!r->goal_min_column)
		row->goal_min = sc->minimum;	/* what that /min divided by */
	if (row->goal_min < 0 || row->goal_min > sc->pages)
		return bad(p, "min must be 0 to the scenario's %ld pages", sc->pages);
	if (fabs(row->per_min - (row->goal_min ? (double)row->moved / row->goal_min : 0)) > RATIO_TOL)
		return bad(p, "/min %.2fx is not %ld moved / minimum %ld", row->per_min, row->moved, row->goal_min);
	/* before the min column every row was divided by the shares' minimum: not a layout goal's */
	if (!r->goal_min_column && strcmp(row->goal, "shares"))
		row->goal_min = -1, row->per_min = -1;
	if (fabs(row->per_kernel - (m ? (double)row->instr / k->instr : 1)) > RATIO_TOL)
		return bad(p, "/kernel %.2fx is not %lld / the kernel's %lld", row->per_kernel, row->instr,
			   m ? k->instr : row->instr);
	if (fabs(row->per_moved - (row->moved ? (double)row->instr / row->moved : 0)) > 0.51)
		return bad(p, "/moved %.0f is not %lld / %ld moved", row->per_moved, row->instr, row->moved);
	if (strcmp(yes, row->refault * 100 <= sc->pages ? "yes" : "no"))
		return bad(p, "'%s' with %ld pages off after a refault of %ld (yes: within 1%%)", yes, row->refault,
			   sc->pages);
	row->have = 1;
	return 0;
}

/* "1..N", "ok N ...", "not ok N ..." */
static int parse_tap(struct parser *p, struct bwap_peers_report *r)
{
	int n = -1, t;

	if (starts(p->line, "1..")) {
		if (r->tap_plan >= 0 || sscanf(p->line, "1..%d%n", &r->tap_plan, &n) != 1 ||
		    n != (int)strlen(p->line) || r->tap_plan < 0)
			return bad(p, "not one TAP plan '1..N'");
		return 0;
	}
	if (sscanf(p->line, starts(p->line, "ok ") ? "ok %d%n" : "not ok %d%n", &t, &n) != 1 ||
	    t != r->tap_ok + r->tap_not_ok + 1)
		return bad(p, "a TAP line out of order (test %d expected)", r->tap_ok + r->tap_not_ok + 1);
	if (starts(p->line, "ok "))
		r->tap_ok++;
	else
		r->tap_not_ok++;
	return 0;
}

/* The current scenario's row of method @name, or NULL. */
static struct bwap_peers_row *row_of(struct parser *p, struct bwap_peers_report *r, const char *name)
{
	if (p->cur < 0)
		return NULL;
	for (int m = 0; m < r->nr_methods; m++)
		if (!strcmp(r->method[m], name) && r->sc[p->cur].row[m].have)
			return &r->sc[p->cur].row[m];
	return NULL;
}

/*
 * The notes under a scenario's rows that the chart needs: the folio-blind
 * move_pages row, and, in a report from before the min column, the
 * minimum to their own goal of DAMON shr ("... minimum from its own start
 * state M (R.RRRx): settling") and of DAMON.  DAMON's follows from its
 * note's "N pages migrated by its stats": where N is the pages that
 * changed node and none is off the layout at the end, no page moved twice
 * and each moved page ends on its layout node, so each started off it,
 * and each page that started off it moved: the minimum is N.  Otherwise it
 * stays unknown.
 */
static int parse_note(struct parser *p, struct bwap_peers_report *r)
{
	static const char own[] = "minimum from its own start state ";
	static const char migrated[] = " pages migrated by its stats";
	struct bwap_peers_row *row;
	const char *q;
	double x;
	long min;

	if (starts(p->line, "#   DAMON: "))
		p->note = "DAMON";
	else if (starts(p->line, "#   DAMON shr "))
		p->note = "DAMON shr";
	else if (!starts(p->line, "#   "))
		p->note = NULL;
	q = strstr(p->line, migrated);
	if (q && p->note && !strcmp(p->note, "DAMON") && !r->goal_min_column) {
		while (q > p->line && q[-1] >= '0' && q[-1] <= '9')
			q--;
		row = row_of(p, r, "DAMON");
		if (!row)	/* n/a: nothing to give a minimum to */
			return 0;
		if (sscanf(q, "%ld", &min) != 1)
			return bad(p, "not DAMON's 'N pages migrated by its stats'");
		if (min == row->moved && !row->layout && !strcmp(row->goal, "layout")) {
			row->goal_min = min;
			row->per_min = min ? 1 : 0;
		}
		return 0;
	}

	if (starts(p->line, "#   move_pages: folio-blind")) {
		row = row_of(p, r, "move_pages");
		if (!row)
			return bad(p, "a folio-blind note without a move_pages row above it");
		row->folio_blind = 1;
		return 0;
	}
	q = strstr(p->line, own);
	if (!q || r->goal_min_column)
		return 0;
	row = row_of(p, r, "DAMON shr");
	if (!row || sscanf(q + strlen(own), "%ld (%lfx)", &min, &x) != 2 || min < 0 || min > r->sc[p->cur].pages)
		return bad(p, "not DAMON shr's '%sM (R.RRRx)' under its row", own);
	if (fabs(x - (min ? (double)row->moved / min : 0)) > 0.00051)
		return bad(p, "DAMON shr's %.3fx is not %ld moved / %ld", x, row->moved, min);
	row->goal_min = min;
	row->per_min = min ? (double)row->moved / min : 0;
	return 0;
}

static int parse_line(struct parser *p, struct bwap_peers_report *r)
{
	const char *l = p->line;

	if (starts(l, "# kernel base "))
		return parse_kernel(p, r, l + strlen("# kernel base "));
	if (starts(l, "# rebalance-bench --peers:"))
		return parse_bench(p, r);
	if (starts(l, "# method "))
		return parse_columns(p, r);
	/* a scenario's header; its continuation and the notes start "#   " */
	if (starts(l, "# ") && l[2] != ' ' && ends(l, "fresh fault under NEW:"))
		return parse_scenario(p, r);
	if (l[0] == '#')
		return parse_note(p, r);
	if (starts(l, "  ") && l[2] && l[2] != ' ')
		return parse_row(p, r);
	if (starts(l, "1..") || starts(l, "ok ") || starts(l, "not ok "))
		return parse_tap(p, r);
	return bad(p, "not a line rebalance-bench --peers or run-bench --peers prints");
}

int bwap_peers_parse(const char *text, const char *name, struct bwap_peers_report *r, char *err, size_t errlen)
{
	struct parser p = { .name = name, .err = err, .errlen = errlen, .cur = -1 };
	char line[1024];

	memset(r, 0, sizeof(*r));
	r->tap_plan = -1;
	snprintf(r->source_name, sizeof(r->source_name), "%s", name);
	while (*text) {
		size_t n = strcspn(text, "\n");

		p.lineno++;
		p.line = line;
		if (n >= sizeof(line)) {
			snprintf(line, sizeof(line), "%.100s", text);
			return bad(&p, "a line longer than %zu characters", sizeof(line) - 1);
		}
		memcpy(line, text, n);
		line[n] = '\0';
		text += n + (text[n] == '\n');
		if (parse_line(&p, r))
			return -1;
	}
	if (!r->nodes) {
		snprintf(err, errlen, "%s: no '# rebalance-bench --peers:' header: not a rebalance-bench --peers "
			 "report (scripts/run-bench --peers writes one to build/bench/peers-*.txt)", name);
		return -1;
	}
	if (!r->nr_scenarios) {
		snprintf(err, errlen, "%s: no scenario in the report", name);
		return -1;
	}
	if (scenario_done(&p, r))
		return -1;
	for (int s = 0; s < r->nr_scenarios; s++)
		for (int m = 0; m < r->nr_methods; m++)
			if (!r->sc[s].row[m].have && !r->sc[s].row[m].na) {
				snprintf(err, errlen, "%s: scenario '%s' has no row for %s: the report is cut short or "
					 "edited", name, r->sc[s].name, r->method[m]);
				return -1;
			}
	/* peers() ends with its TAP lines: without them the run died or the file was cut */
	if (r->tap_plan < 0) {
		snprintf(err, errlen, "%s: no TAP plan '1..N' after the scenarios: the run did not finish or the "
			 "report is cut short", name);
		return -1;
	}
	if (r->tap_ok + r->tap_not_ok != r->tap_plan) {
		snprintf(err, errlen, "%s: the TAP plan is 1..%d but %d tests follow: the report is cut short", name,
			 r->tap_plan, r->tap_ok + r->tap_not_ok);
		return -1;
	}
	return 0;
}

int bwap_peers_read(const char *path, struct bwap_peers_report *r, char *err, size_t errlen)
{
	char *text = bwap_read_file(path, NULL);
	int ret;

	if (!text) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = bwap_peers_parse(text, path, r, err, errlen);
	free(text);
	return ret;
}
