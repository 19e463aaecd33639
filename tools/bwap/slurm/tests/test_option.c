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
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
