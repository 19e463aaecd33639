// SPDX-License-Identifier: GPL-2.0
/* bwap.so's --bwap values and plugstack.conf arguments: what is taken, what is refused and why. */
#include <stdlib.h>

#include "tap.h"
#include "bwap_slurm.h"

static struct bwap_slurm_request req;
static char err[512];

static int parse(const char *text)
{
	memset(&req, 0, sizeof(req));
	err[0] = '\0';
	return bwap_slurm_parse_option(text, &req, err, sizeof(err));
}

static void refused(const char *text, const char *why)
{
	CHECK(parse(text) == -1 && strstr(err, why), "--bwap=%s refused: \"%s\" (wanted \"%s\")", text, err, why);
}

int main(void)
{
	char *av[4];
	struct bwap_slurm_conf c;
	int rc;

	CHECK(!parse(NULL) && req.kind == BWAP_SLURM_CANONICAL && !req.tune, "--bwap alone is canonical");
	CHECK(!parse("canonical") && req.kind == BWAP_SLURM_CANONICAL, "--bwap=canonical");
	CHECK(!parse("(null)") && req.kind == BWAP_SLURM_CANONICAL,
	      "\"(null)\", what sbatch's environment gives its sruns for plain --bwap, is canonical");
	CHECK(!parse("dwp") && req.kind == BWAP_SLURM_TUNED && req.tune, "--bwap=dwp: bwapd tunes");
	CHECK(!parse("dwp:0.25") && req.kind == BWAP_SLURM_DWP && req.dwp == 0.25, "--bwap=dwp:0.25");
	CHECK(!parse("dwp:1") && req.dwp == 1, "--bwap=dwp:1 (upper bound)");
	CHECK(!parse("0:5,1:3,2:1,3:1") && req.kind == BWAP_SLURM_EXPLICIT && req.nodes == 0xf &&
	      req.w[0] == 5 && req.w[1] == 3 && req.w[2] == 1 && req.w[3] == 1, "--bwap=0:5,1:3,2:1,3:1 (pairs)");
	CHECK(!parse("5:3:1:1") && req.nodes == 0xf && req.w[0] == 5 && req.w[1] == 3 && req.w[3] == 1,
	      "--bwap=5:3:1:1 (weights of nodes 0..3)");
	CHECK(!parse("2:7") && req.nodes == 0x4 && req.w[2] == 7, "--bwap=2:7 is node 2 weight 7, as numactl -w");
	CHECK(!parse("0:0,63:255") && req.w[63] == 255, "node 63 and weight 255 are the limits");
	refused("dwp:1.5", "above 1");
	refused("dwp:-0.1", "below 0");
	refused("dwp:nan", "not a finite number");
	refused("dwp:inf", "not a finite number");
	refused("dwp:", "not a number");
	refused("dwp:0.5x", "not a number");
	refused("5:300:1:1", "is above 255");
	refused("0:5,1:256", "is above 255");
	refused("0:5,1:-3", "not a whole number");
	refused("0:5,0:3", "two weights");
	refused("0:0,1:0", "every weight");
	refused("0:0:0", "every weight");
	refused("64:1", "too high");
	refused("99999999999999999999:1", "too high");
	refused("0:5,", "ends in a comma");
	refused("0:5,,1:3", "is not NODE:WEIGHT");
	refused("0:5,1", "is not NODE:WEIGHT");
	refused("5:3::1", "is empty");
	refused("5", "is not a --bwap value");
	refused("fast", "is not a --bwap value");
	refused("0:1.5,1:1", "not a whole number");
	refused(" 0:5", "is not a --bwap value");
	parse("0:5,1:3");
	{
		char buf[128];

		CHECK(!strcmp(bwap_slurm_request_text(&req, buf, sizeof(buf)), "explicit 0:5,1:3"),
		      "request text: %s", buf);
	}

	CHECK(!bwap_slurm_parse_conf(0, NULL, &c, err, sizeof(err)) && c.missing == BWAP_MISSING_FAIL &&
	      !strcmp(c.matrix, "/var/lib/bwap/matrix") && c.max_weight == 255, "plugstack defaults");
	av[0] = "missing=run";
	av[1] = "state_dir=/srv/bwap";
	av[2] = "max_weight=31";
	CHECK(!bwap_slurm_parse_conf(3, av, &c, err, sizeof(err)) && c.missing == BWAP_MISSING_RUN &&
	      !strcmp(c.matrix, "/srv/bwap/matrix") && c.max_weight == 31, "plugstack missing=run state_dir= max_weight=");
	av[0] = "missing=maybe";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "fail or run"), "missing=maybe: %s", err);
	av[0] = "max_weight=256";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "1 to 255"), "max_weight=256: %s", err);
	av[0] = "matrix=relative";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "absolute"), "matrix=relative: %s", err);
	av[0] = "colour=blue";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "unknown argument"), "colour=blue: %s", err);

	/* A bad value leaves the request as it was: nothing half-parsed ever runs. */
	parse("dwp:0.5");
	err[0] = '\0';
	rc = bwap_slurm_parse_option("5:3:x", &req, err, sizeof(err));
	CHECK(rc == -1 && req.kind == BWAP_SLURM_DWP &&
	      req.dwp == 0.5 && !req.nodes && !req.w[0] && !req.w[1],
	      "--bwap=5:3:x refused and the request is still dwp 0.5 (kind %d, nodes %#llx, w %u,%u): %s",
	      req.kind, (unsigned long long)req.nodes, req.w[0], req.w[1], err);
	parse("canonical");
	rc = bwap_slurm_parse_option("0:5,1:3,0:1", &req, err, sizeof(err));
	CHECK(rc == -1 &&
	      req.kind == BWAP_SLURM_CANONICAL && !req.nodes, "--bwap=0:5,1:3,0:1 refused, the request still canonical");

	/* The site's policy in plugstack.conf. */
	av[0] = "tune=deny";
	av[1] = "deny=debug,short";
	av[2] = "default=big:canonical";
	av[3] = "report=stderr";
	err[0] = '\0';
	CHECK(!bwap_slurm_parse_conf(4, av, &c, err, sizeof(err)),
	      "plugstack tune=deny deny=debug,short default=big:canonical report=stderr: %s", err);
	CHECK(c.tune_denied && c.report_stderr && c.nr_defaults == 1 && !strcmp(c.defaults[0].partition, "big") &&
	      c.defaults[0].r.kind == BWAP_SLURM_CANONICAL, "... each taken");
	{
		struct bwap_slurm_request j;

		memset(&j, 0, sizeof(j));
		CHECK(bwap_slurm_partition_default(&c, "big", &j) == 1 && j.kind == BWAP_SLURM_CANONICAL,
		      "a job of partition big without --bwap gets its default, canonical");
		memset(&j, 0, sizeof(j));
		CHECK(!bwap_slurm_partition_default(&c, "small", &j) && j.kind == BWAP_SLURM_OFF,
		      "a job of partition small without --bwap stays without");
		j.kind = BWAP_SLURM_CANONICAL;
		CHECK(bwap_slurm_job_check(&j, &c, "short", NULL, err, sizeof(err)) == -1 &&
		      strstr(err, "not offered in partition short"), "--bwap in denied partition short: %s", err);
		CHECK(!bwap_slurm_job_check(&j, &c, "shorter", NULL, err, sizeof(err)),
		      "--bwap in partition shorter (not short) is fine");
		j.tune = 1;
		CHECK(bwap_slurm_job_check(&j, &c, "big", NULL, err, sizeof(err)) == -1 && strstr(err, "tune=deny"),
		      "--bwap-tune with tune=deny: %s", err);
		j.tune = 0;
		CHECK(bwap_slurm_job_check(&j, &c, "big", "verbose,local", err, sizeof(err)) == -1 &&
		      strstr(err, "--mem-bind=verbose,local and --bwap"), "--mem-bind=local with --bwap: %s", err);
		CHECK(!bwap_slurm_job_check(&j, &c, "big", "none", err, sizeof(err)), "--mem-bind=none with --bwap is fine");
		j.kind = BWAP_SLURM_EXPLICIT;
		j.nodes = 1;
		j.w[0] = 1;
		j.tune = 1;
		c.tune_denied = 0;
		CHECK(bwap_slurm_job_check(&j, &c, NULL, NULL, err, sizeof(err)) == -1 &&
		      strstr(err, "--bwap-tune cannot be combined with these weights (explicit 0:1)"), "%s", err);
	}
	/* --bwap=off: refuses a partition's default, and clears an inherited --bwap (item 9). */
	{
		struct bwap_slurm_request j;

		av[0] = "default=big:canonical";
		CHECK(!bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)), "default=big:canonical: %s", err);
		memset(&j, 0, sizeof(j));
		err[0] = '\0';
		CHECK(!bwap_slurm_parse_option("off", &j, err, sizeof(err)) && j.kind == BWAP_SLURM_OFF,
		      "--bwap=off is taken (%s)", err);
		CHECK(!bwap_slurm_partition_default(&c, "big", &j) && j.kind == BWAP_SLURM_OFF,
		      "--bwap=off in partition big (default=big:canonical): the job stays without BWAP (kind %d)", j.kind);
		memset(&j, 0, sizeof(j));
		bwap_slurm_parse_option(NULL, &j, err, sizeof(err));	/* sbatch --bwap, through the environment */
		j.tune = 1;						/* and --bwap-tune */
		CHECK(!bwap_slurm_parse_option("off", &j, err, sizeof(err)) && j.kind == BWAP_SLURM_OFF && !j.tune &&
		      !bwap_slurm_partition_default(&c, "big", &j) && !bwap_slurm_job_check(&j, &c, "big", "local",
											 err, sizeof(err)),
		      "an inherited --bwap --bwap-tune, then srun --bwap=off: no BWAP, no tuning, and --mem-bind=local "
		      "is fine");
		CHECK(!bwap_slurm_parse_option("canonical", &j, err, sizeof(err)) && j.kind == BWAP_SLURM_CANONICAL,
		      "--bwap=off then --bwap=canonical: the last one counts");
	}
	/* default=: the partition's own entry over "*", in either order (item 10). */
	{
		static char *orders[2][2] = { { "default=*:canonical", "default=gpu:off" },
					      { "default=gpu:off", "default=*:canonical" } };
		struct bwap_slurm_request j;

		for (int o = 0; o < 2; o++) {
			err[0] = '\0';
			rc = bwap_slurm_parse_conf(2, orders[o], &c, err, sizeof(err));
			CHECK(!rc, "%s %s: taken (%s)", orders[o][0], orders[o][1], err);
			memset(&j, 0, sizeof(j));
			CHECK(!bwap_slurm_partition_default(&c, "gpu", &j) && j.kind == BWAP_SLURM_OFF,
			      "%s %s: a gpu job gets no BWAP (kind %d)", orders[o][0], orders[o][1], j.kind);
			memset(&j, 0, sizeof(j));
			CHECK(bwap_slurm_partition_default(&c, "cpu", &j) == 1 && j.kind == BWAP_SLURM_CANONICAL,
			      "%s %s: a cpu job gets --bwap from *", orders[o][0], orders[o][1]);
		}
		av[0] = "default=gpu:off";
		av[1] = "default=gpu:canonical";
		CHECK(bwap_slurm_parse_conf(2, av, &c, err, sizeof(err)) && strstr(err, "already has a default="),
		      "two default= for one partition: %s", err);
		av[0] = "default=big:dwp";
		av[1] = "tune=deny";
		CHECK(bwap_slurm_parse_conf(2, av, &c, err, sizeof(err)) && strstr(err, "tune=deny refuses"),
		      "default=big:dwp with tune=deny: %s", err);
		av[0] = "default=a*:canonical";
		CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "PARTITION:VALUE"),
		      "default=a*:canonical (no patterns but *): %s", err);
	}
	av[0] = "default=big:5:300";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "'default=big:5:300': weight '300'"),
	      "default=big:5:300: %s", err);
	av[0] = "deny=a,,b";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "partition names"), "deny=a,,b: %s", err);
	av[0] = "tune=maybe";
	CHECK(bwap_slurm_parse_conf(1, av, &c, err, sizeof(err)) && strstr(err, "allow or deny"), "tune=maybe: %s", err);

	/* A bad argument is reported at its file and line. */
	{
		char d[] = "/tmp/bwap-plugstack.XXXXXX", p1[128], p2[128], where[256] = "";
		const char *files[3] = { p1, p2, NULL };
		FILE *f;

		if (mkdtemp(d)) {
			snprintf(p1, sizeof(p1), "%s/plugstack.conf", d);
			snprintf(p2, sizeof(p2), "%s/bwap.conf", d);
			f = fopen(p1, "w");
			fprintf(f, "include %s/*.conf\n", d);
			fclose(f);
			f = fopen(p2, "w");
			fprintf(f, "# comment\n#required /usr/lib/slurm/bwap.so missing=maybe\n\n"
				   "optional /usr/lib/slurm/other.so missing=maybe\n"
				   "required /usr/lib/slurm/bwap.so  missing=maybe # a typo\n");
			fclose(f);
			av[0] = "missing=maybe";
			snprintf(err, sizeof(err), "%s:5", p2);
			CHECK(!bwap_slurm_conf_locate(files, 1, av, where, sizeof(where)) && !strcmp(where, err),
			      "the bwap.so line with missing=maybe is at %s (wanted %s)", where, err);
			CHECK(bwap_slurm_conf_locate(files, 0, av, where, sizeof(where)) == -1,
			      "no bwap.so line without arguments there");
			snprintf(err, sizeof(err), "rm -rf %s", d);
			if (system(err))
				return 1;
		}
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
