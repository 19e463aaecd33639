// SPDX-License-Identifier: GPL-2.0
/*
 * bwap.so's inputs: the --bwap value a user gives srun or sbatch, and
 * the arguments of its plugstack.conf line.  Every number is checked to
 * be a finite number in range; each error says what is wrong and what
 * to write instead, because srun prints it before the job starts.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwap_slurm.h"

#define OPTION_FORMS "--bwap, --bwap=canonical, --bwap=dwp, --bwap=dwp:0.5, --bwap=0:5,1:3, --bwap=5:3:1:1 " \
	"or --bwap=off"

/* A whole number lo..hi from exactly text[0..len); -1 if it is not one. */
static long whole_number(const char *text, size_t len, long lo, long hi)
{
	char buf[24], *end;
	long v;

	if (!len || len >= sizeof(buf))
		return len ? hi + 1 : -1;	/* too many digits: out of range */
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)buf[i]))
			return -1;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno == ERANGE || v > hi)
		return hi + 1;
	return v < lo ? -1 : v;
}

static int parse_dwp(const char *text, struct bwap_slurm_request *r, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (!*text || isspace((unsigned char)*text) || *end) {
		snprintf(err, errlen, "DWP '%s' is not a number; give one from 0 to 1, e.g. --bwap=dwp:0.5", text);
		return -1;
	}
	if (!isfinite(v)) {
		snprintf(err, errlen, "DWP '%s' is not a finite number; give one from 0 to 1, e.g. --bwap=dwp:0.5",
			 text);
		return -1;
	}
	if (v < 0 || v > 1) {
		snprintf(err, errlen, "DWP %s is %s; give one from 0 to 1 (0 = canonical, 1 = worker nodes only)",
			 text, v < 0 ? "below 0" : "above 1");
		return -1;
	}
	r->kind = BWAP_SLURM_DWP;
	r->dwp = v;
	return 0;
}

/* One weight item of length len at p, for node; 0 or -1 (err). */
static int take_weight(const char *text, const char *p, size_t len, int node, struct bwap_slurm_request *r,
		       char *err, size_t errlen)
{
	long v = whole_number(p, len, 0, 255);

	if (v < 0 || v > 255) {
		snprintf(err, errlen, "weight '%.*s' for node %d in '%s' %s; weights are whole numbers from 0 to 255",
			 (int)len, p, node, text, v > 255 ? "is above 255" : "is not a whole number");
		return -1;
	}
	if (bwap_nodeset_has(r->nodes, node)) {
		snprintf(err, errlen, "node %d has two weights in '%s'; give each node once", node, text);
		return -1;
	}
	r->nodes |= BWAP_NODE_BIT(node);
	r->w[node] = (unsigned char)v;
	return 0;
}

/* "0:5,1:3" (pairs) or "5:3:1:1" (weights of nodes 0, 1, ...). */
static int parse_weights(const char *text, struct bwap_slurm_request *r, char *err, size_t errlen)
{
	int colons = 0, pairs = strchr(text, ',') != NULL;
	const char *p = text;

	for (const char *q = text; *q; q++)
		colons += *q == ':';
	/* one pair alone ("2:1") is node:weight, as numactl -w reads it */
	if (colons == 1)
		pairs = 1;
	if (!pairs && colons < 2) {
		snprintf(err, errlen, "'%s' is not a --bwap value; give %s", text, OPTION_FORMS);
		return -1;
	}
	r->kind = BWAP_SLURM_EXPLICIT;
	if (!pairs) {
		for (int node = 0; ; node++) {
			size_t len = strcspn(p, ":");

			if (node >= BWAP_MAX_NODES) {
				snprintf(err, errlen, "'%s' gives weights for more than %d nodes", text, BWAP_MAX_NODES);
				return -1;
			}
			if (!len) {
				snprintf(err, errlen, "weight %d in '%s' is empty; give one number per node, e.g. 5:3:1:1",
					 node + 1, text);
				return -1;
			}
			if (take_weight(text, p, len, node, r, err, errlen))
				return -1;
			p += len;
			if (!*p)
				break;
			p++;
		}
	} else {
		for (;;) {
			size_t len = strcspn(p, ","), nlen = strcspn(p, ":,");
			long node;

			if (!len || nlen >= len) {
				snprintf(err, errlen, "'%.*s' in '%s' is not NODE:WEIGHT; write pairs like 0:5,1:3",
					 (int)len, p, text);
				return -1;
			}
			node = whole_number(p, nlen, 0, BWAP_MAX_NODES - 1);
			if (node < 0 || node >= BWAP_MAX_NODES) {
				snprintf(err, errlen, "node '%.*s' in '%s' %s; nodes are whole numbers from 0 to %d",
					 (int)nlen, p, text, node >= BWAP_MAX_NODES ? "is too high" : "is not a node number",
					 BWAP_MAX_NODES - 1);
				return -1;
			}
			if (take_weight(text, p + nlen + 1, len - nlen - 1, (int)node, r, err, errlen))
				return -1;
			p += len;
			if (!*p)
				break;
			if (!*++p) {
				snprintf(err, errlen, "'%s' ends in a comma; write pairs like 0:5,1:3", text);
				return -1;
			}
		}
	}
	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (bwap_nodeset_has(r->nodes, n) && r->w[n])
			return 0;
	snprintf(err, errlen, "every weight in '%s' is 0; at least one node needs a weight from 1 to 255", text);
	return -1;
}

/* Into r, which the caller throws away on error. */
static int parse_option(const char *text, struct bwap_slurm_request *r, char *err, size_t errlen)
{
	r->kind = BWAP_SLURM_CANONICAL;
	/*
	 * sbatch and salloc hand an option given without a value to the
	 * job's sruns as the text "(null)" (SLURM_SPANK__SLURM_SPANK_OPTION_
	 * bwap_bwap, seen with Slurm 24.11): that is plain --bwap.
	 */
	if (!text || !*text || !strcmp(text, "canonical") || !strcmp(text, "(null)"))
		return 0;
	/*
	 * off: no BWAP, whatever came before (an inherited --bwap or
	 * --bwap-tune) and whatever the partition's default= says.
	 */
	if (!strcmp(text, "off")) {
		r->kind = BWAP_SLURM_OFF;
		r->tune = 0;
		r->off_given = 1;
		return 0;
	}
	if (!strcmp(text, "dwp")) {
		r->kind = BWAP_SLURM_TUNED;
		r->tune = 1;
		return 0;
	}
	if (!strncmp(text, "dwp:", 4) || !strncmp(text, "dwp=", 4))
		return parse_dwp(text + 4, r, err, errlen);
	if (!isdigit((unsigned char)*text)) {
		snprintf(err, errlen, "'%s' is not a --bwap value; give %s", text, OPTION_FORMS);
		return -1;
	}
	return parse_weights(text, r, err, errlen);
}

int bwap_slurm_parse_option(const char *text, struct bwap_slurm_request *r, char *err, size_t errlen)
{
	struct bwap_slurm_request tmp;

	/* a temporary: a bad value ("5:3:x") leaves r as it was, never half-parsed */
	memset(&tmp, 0, sizeof(tmp));
	tmp.tune = r->tune;
	tmp.job = r->job;
	tmp.step = r->step;
	tmp.task = r->task;
	if (parse_option(text, &tmp, err, errlen))
		return -1;
	*r = tmp;
	return 0;
}

char *bwap_slurm_request_text(const struct bwap_slurm_request *r, char *buf, size_t len)
{
	size_t n = 0;

	switch (r->kind) {
	case BWAP_SLURM_OFF:
		snprintf(buf, len, "off");
		break;
	case BWAP_SLURM_CANONICAL:
		snprintf(buf, len, "canonical");
		break;
	case BWAP_SLURM_TUNED:
		snprintf(buf, len, "canonical, tuned by bwapd");
		break;
	case BWAP_SLURM_DWP:
		snprintf(buf, len, "dwp %.3f", r->dwp);
		break;
	case BWAP_SLURM_EXPLICIT:
		n = snprintf(buf, len, "explicit");
		for (int i = 0; i < BWAP_MAX_NODES && n < len; i++)
			if (bwap_nodeset_has(r->nodes, i))
				n += snprintf(buf + n, len - n, "%s%d:%u", n == 8 ? " " : ",", i, r->w[i]);
		break;
	}
	return buf;
}

/* A partition list "a,b": names of letters, digits, '-', '_', '.', no empty item. */
static int partition_list_bad(const char *v)
{
	if (!*v || *v == ',' || v[strlen(v) - 1] == ',' || strstr(v, ",,"))
		return 1;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("-_.,", *v))
			return 1;
	return 0;
}

/* key=value with value copied into out; 1 if arg is that key, -1 if too long. */
static int conf_value(const char *arg, const char *key, char *out, size_t outlen)
{
	size_t k = strlen(key);

	if (strncmp(arg, key, k) || arg[k] != '=')
		return 0;
	if (strlen(arg + k + 1) >= outlen || !arg[k + 1])
		return -1;
	strcpy(out, arg + k + 1);
	return 1;
}

int bwap_slurm_parse_conf(int argc, char **argv, struct bwap_slurm_conf *c, char *err, size_t errlen)
{
	char val[512];
	int r;

	memset(c, 0, sizeof(*c));
	c->missing = BWAP_MISSING_FAIL;
	c->max_weight = 255;
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", BWAP_STATE_DIR);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if ((r = conf_value(a, "missing", val, sizeof(val)))) {
			if (r < 0 || (strcmp(val, "fail") && strcmp(val, "run"))) {
				snprintf(err, errlen, "'%s': missing= takes fail or run", a);
				return -1;
			}
			c->missing = strcmp(val, "run") ? BWAP_MISSING_FAIL : BWAP_MISSING_RUN;
		} else if ((r = conf_value(a, "state_dir", c->state_dir, sizeof(c->state_dir)))) {
			if (r < 0 || c->state_dir[0] != '/') {
				snprintf(err, errlen, "'%s': state_dir= takes an absolute path", a);
				return -1;
			}
		} else if ((r = conf_value(a, "matrix", c->matrix, sizeof(c->matrix)))) {
			if (r < 0 || c->matrix[0] != '/') {
				snprintf(err, errlen, "'%s': matrix= takes an absolute path", a);
				return -1;
			}
		} else if ((r = conf_value(a, "max_weight", val, sizeof(val)))) {
			long v = r < 0 ? -1 : whole_number(val, strlen(val), 1, 255);

			if (v < 1 || v > 255) {
				snprintf(err, errlen, "'%s': max_weight= takes a whole number from 1 to 255",
					 a);
				return -1;
			}
			c->max_weight = (int)v;
		} else if ((r = conf_value(a, "tune", val, sizeof(val)))) {
			if (r < 0 || (strcmp(val, "allow") && strcmp(val, "deny"))) {
				snprintf(err, errlen, "'%s': tune= takes allow or deny", a);
				return -1;
			}
			c->tune_denied = !strcmp(val, "deny");
		} else if ((r = conf_value(a, "report", val, sizeof(val)))) {
			if (r < 0 || (strcmp(val, "log") && strcmp(val, "stderr"))) {
				snprintf(err, errlen, "'%s': report= takes log or stderr", a);
				return -1;
			}
			c->report_stderr = !strcmp(val, "stderr");
		} else if ((r = conf_value(a, "deny", val, sizeof(val)))) {
			if (r < 0 || partition_list_bad(val)) {
				snprintf(err, errlen, "'%s': deny= takes partition names separated by commas, "
					 "e.g. deny=debug,short", a);
				return -1;
			}
			if (strlen(c->deny) + strlen(val) + 2 >= sizeof(c->deny)) {
				snprintf(err, errlen, "'%s': the deny= lists are longer than %zu characters in all", a,
					 sizeof(c->deny) - 2);
				return -1;
			}
			/* ",a,b," so that a name is found whole */
			if (!c->deny[0])
				strcat(c->deny, ",");
			strcat(c->deny, val);
			strcat(c->deny, ",");
		} else if ((r = conf_value(a, "default", val, sizeof(val)))) {
			char *colon = r > 0 ? strchr(val, ':') : NULL;
			struct bwap_slurm_default *d;
			char why[400];

			if (!colon || colon == val || colon - val >= (long)sizeof(d->partition) ||
			    ((*colon = '\0', strcmp(val, "*")) && (partition_list_bad(val) || strchr(val, ',')))) {
				snprintf(err, errlen, "'%s': default= takes PARTITION:VALUE, e.g. default=big:canonical "
					 "(VALUE as --bwap takes it, or off)", a);
				return -1;
			}
			if (c->nr_defaults == BWAP_SLURM_MAX_DEFAULTS) {
				snprintf(err, errlen, "'%s': more than %d default= arguments", a, BWAP_SLURM_MAX_DEFAULTS);
				return -1;
			}
			d = &c->defaults[c->nr_defaults];
			memset(d, 0, sizeof(*d));
			memcpy(d->partition, val, colon - val);	/* checked shorter above */
			for (int k = 0; k < c->nr_defaults; k++)
				if (!strcmp(c->defaults[k].partition, d->partition)) {
					snprintf(err, errlen, "'%s': partition %s already has a default= (give each "
						 "partition one; * covers those without their own)", a, d->partition);
					return -1;
				}
			if (bwap_slurm_parse_option(colon + 1, &d->r, why, sizeof(why))) {
				snprintf(err, errlen, "'%s': %s", a, why);
				return -1;
			}
			d->r.off_given = 0;	/* a site's default, not a user's refusal */
			c->nr_defaults++;
		} else {
			snprintf(err, errlen, "unknown argument '%s' (bwap.so takes missing=fail|run, state_dir=DIR, "
				 "matrix=FILE, max_weight=N, tune=allow|deny, deny=PARTITION,..., "
				 "default=PARTITION:VALUE, report=log|stderr)", a);
			return -1;
		}
	}
	/* a default the same line forbids would fail every job of its partition */
	for (int i = 0; i < c->nr_defaults && c->tune_denied; i++)
		if (c->defaults[i].r.tune) {
			snprintf(err, errlen, "'default=%s:dwp' asks bwapd to tune, which tune=deny refuses; give "
				 "default=%s:canonical, or tune=allow", c->defaults[i].partition, c->defaults[i].partition);
			return -1;
		}
	if (!c->matrix[0] && snprintf(c->matrix, sizeof(c->matrix), "%s/matrix", c->state_dir) >=
	    (int)sizeof(c->matrix)) {
		snprintf(err, errlen, "state_dir= is too long");
		return -1;
	}
	return 0;
}

/* Is partition one of deny=? */
static int denied(const struct bwap_slurm_conf *c, const char *partition)
{
	char want[80];

	if (!c->deny[0] || !partition || !*partition || strlen(partition) > 64)
		return 0;
	snprintf(want, sizeof(want), ",%s,", partition);
	return strstr(c->deny, want) != NULL;
}

int bwap_slurm_partition_default(const struct bwap_slurm_conf *c, const char *partition,
				 struct bwap_slurm_request *r)
{
	const struct bwap_slurm_default *d = NULL;

	if (r->kind != BWAP_SLURM_OFF || r->off_given || !partition)
		return 0;
	/* the most specific entry: the partition's own, else "*", whatever their order */
	for (int i = 0; i < c->nr_defaults; i++)
		if (!strcmp(c->defaults[i].partition, partition))
			d = &c->defaults[i];
	for (int i = 0; i < c->nr_defaults && !d; i++)
		if (!strcmp(c->defaults[i].partition, "*"))
			d = &c->defaults[i];
	if (d) {
		long long job = r->job, step = r->step;
		long task = r->task;

		*r = d->r;
		r->job = job;
		r->step = step;
		r->task = task;
		return r->kind != BWAP_SLURM_OFF;
	}
	return 0;
}

/* SLURM_MEM_BIND_TYPE / SLURM_MEM_BIND as srun exports them: does it bind memory? */
static int binds_memory(const char *v)
{
	static const char *const kinds[] = { "local", "map_mem", "mask_mem", "rank", "prefer", NULL };

	for (int i = 0; v && kinds[i]; i++)
		if (strstr(v, kinds[i]))
			return 1;
	return 0;
}

int bwap_slurm_job_check(const struct bwap_slurm_request *r, const struct bwap_slurm_conf *c,
			 const char *partition, const char *mem_bind, char *err, size_t errlen)
{
	char what[256];

	if (r->kind == BWAP_SLURM_OFF)
		return 0;
	if (r->tune && (r->kind == BWAP_SLURM_EXPLICIT || r->kind == BWAP_SLURM_DWP)) {
		snprintf(err, errlen, "--bwap-tune cannot be combined with these weights (%s): bwapd tunes from the "
			 "canonical weights; give --bwap --bwap-tune, or drop --bwap-tune to keep these weights",
			 bwap_slurm_request_text(r, what, sizeof(what)));
		return -1;
	}
	if (r->tune && c->tune_denied) {
		snprintf(err, errlen, "--bwap-tune is not offered on this cluster (plugstack.conf: tune=deny); "
			 "give --bwap without it, or ask the administrator");
		return -1;
	}
	if (denied(c, partition)) {
		snprintf(err, errlen, "--bwap is not offered in partition %s (plugstack.conf: deny=); run without "
			 "--bwap there, or in another partition", partition);
		return -1;
	}
	if (binds_memory(mem_bind)) {
		snprintf(err, errlen, "--mem-bind=%s and --bwap both place the job's memory, and only one can; "
			 "give --mem-bind or --bwap, not both", mem_bind);
		return -1;
	}
	return 0;
}

/*
 * One plugstack line, its comment cut, into tok (at most max words); the
 * number of words.  *args: where the arguments of a "required|optional
 * .../bwap.so ARGS..." line start, else -1.
 */
static int plugstack_words(char *line, char **tok, int max, int *args)
{
	char *save = NULL, *p;
	int n = 0;

	line[strcspn(line, "#\r\n")] = '\0';
	for (p = strtok_r(line, " \t", &save); p && n < max; p = strtok_r(NULL, " \t", &save))
		tok[n++] = p;
	*args = -1;
	if (n >= 2 && (!strcmp(tok[0], "required") || !strcmp(tok[0], "optional"))) {
		size_t l = strlen(tok[1]);

		if (l >= 7 && !strcmp(tok[1] + l - 7, "bwap.so") && (l == 7 || tok[1][l - 8] == '/'))
			*args = 2;
	}
	return n;
}

int bwap_slurm_conf_locate(const char *const *files, int argc, char **argv, char *where, size_t len)
{
	for (int f = 0; files && files[f]; f++) {
		FILE *in = fopen(files[f], "r");
		char line[4096], *tok[64];
		int lineno = 0, n, a;

		while (in && fgets(line, sizeof(line), in)) {
			lineno++;
			n = plugstack_words(line, tok, 64, &a);
			/* the bwap.so line whose arguments are exactly argv */
			if (a < 0 || n - a != argc)
				continue;
			for (int i = 0; i < argc && a >= 0; i++)
				if (strcmp(tok[a + i], argv[i]))
					a = -1;
			if (a >= 0) {
				snprintf(where, len, "%s:%d", files[f], lineno);
				fclose(in);
				return 0;
			}
		}
		if (in)
			fclose(in);
	}
	return -1;
}

/*
 * srun's options that take their value as the next word (getopt's
 * "--opt VALUE"): the short ones of its option string, and the long ones
 * a job line commonly has.  Any other word starting with '-' is a flag.
 */
static const char short_with_value[] = "ABcCdDeGiJLmMnNopPrStTUwWx";
static const char *const long_with_value[] = {
	"account", "partition", "nodes", "ntasks", "cpus-per-task", "ntasks-per-node", "time", "job-name",
	"nodelist", "exclude", "constraint", "mem", "mem-per-cpu", "mem-per-gpu", "gres", "gpus", "qos",
	"reservation", "output", "error", "input", "chdir", "cpu-bind", "distribution", "dependency",
	"cluster", "clusters", "licenses", "begin", "comment", "export", "hint", "jobid", "mpi", "network",
	"nice", "profile", "propagate", "signal", "switches", "threads-per-core", "cores-per-socket",
	"sockets-per-node", "time-min", "tmp", "uid", "gid", "wckey", "cpu-freq", "het-group", "gpu-bind",
	"gpus-per-node", "gpus-per-task", "mincpus", "ntasks-per-core", "ntasks-per-socket",
	"ntasks-per-gpu", NULL
};

const char *bwap_slurm_cmdline_mem_bind(int argc, char **argv, char *buf, size_t len)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--") || a[0] != '-' || !a[1])
			return NULL;	/* the program starts here */
		if (!strncmp(a, "--mem-bind", 10) || !strncmp(a, "--mem_bind", 10)) {
			if (a[10] == '=') {
				snprintf(buf, len, "%s", a + 11);
				return buf;
			}
			if (!a[10] && i + 1 < argc) {
				snprintf(buf, len, "%s", argv[i + 1]);
				return buf;
			}
			continue;
		}
		if (a[1] == '-') {
			if (strchr(a, '='))
				continue;
			for (int k = 0; long_with_value[k]; k++)
				if (!strcmp(a + 2, long_with_value[k])) {
					i++;	/* its value */
					break;
				}
			continue;
		}
		/* -n4, -n 4, -lv: the first letter that takes a value takes the rest, or the next word */
		for (const char *p = a + 1; *p; p++)
			if (strchr(short_with_value, *p)) {
				if (!p[1])
					i++;
				break;
			}
	}
	return NULL;
}

/* plugstack_find on one file, depth includes deep. */
static int find_in(const char *file, int depth, char *args, size_t argslen, char *where, size_t wherelen)
{
	char line[4096], dir[4096], tmp[4096];
	FILE *in = fopen(file, "r");
	int lineno = 0, r = 0;

	if (!in)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp));
	while (!r && fgets(line, sizeof(line), in)) {
		char *tok[64];
		int n, a;

		lineno++;
		n = plugstack_words(line, tok, 64, &a);
		if (n >= 2 && !strcmp(tok[0], "include") && depth < 8) {
			char pat[8200];
			glob_t g;

			if (tok[1][0] == '/')
				snprintf(pat, sizeof(pat), "%s", tok[1]);
			else
				snprintf(pat, sizeof(pat), "%s/%s", dir, tok[1]);
			if (glob(pat, 0, NULL, &g)) {
				/* configless: slurmd keeps the included files beside plugstack.conf */
				snprintf(tmp, sizeof(tmp), "%s", tok[1]);
				snprintf(pat, sizeof(pat), "%s/%s", dir, basename(tmp));
				if (glob(pat, 0, NULL, &g))
					g.gl_pathc = 0;
			}
			for (size_t i = 0; i < g.gl_pathc && !r; i++)
				r = find_in(g.gl_pathv[i], depth + 1, args, argslen, where, wherelen) > 0;
			if (g.gl_pathc)
				globfree(&g);
		} else if (a >= 0) {
			args[0] = '\0';
			for (int i = a; i < n; i++)
				snprintf(args + strlen(args), argslen - strlen(args), "%s%s", i > a ? " " : "", tok[i]);
			snprintf(where, wherelen, "%s:%d", file, lineno);
			r = 1;
		}
	}
	fclose(in);
	return r;
}

int bwap_slurm_plugstack_find(const char *plugstack, char *args, size_t argslen, char *where, size_t wherelen,
			      char *err, size_t errlen)
{
	int r = find_in(plugstack, 0, args, argslen, where, wherelen);

	if (r < 0)
		snprintf(err, errlen, "cannot read %s: %s", plugstack, strerror(errno));
	return r;
}
