// SPDX-License-Identifier: GPL-2.0
/*
 * bwap.so, the SPANK glue: the --bwap and --bwap-tune options of srun,
 * sbatch and salloc, checked where the user types them (so srun refuses a
 * bad value before the job starts), and in slurmstepd the per-task hooks:
 * slurm_spank_task_init (in the task, after Slurm bound its CPUs and
 * before exec) places it, slurm_spank_task_exit (in slurmstepd) makes
 * bwapd forget it.  The work is in task.c, the parsing in option.c.
 */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <slurm/spank.h>

#include "bwap_slurm.h"

SPANK_PLUGIN(bwap, 1);

/*
 * Set by the option callbacks, which run in srun/sbatch and again in
 * slurmstepd before it forks the tasks, so every task sees them.
 */
static struct bwap_slurm_request request;
static struct bwap_slurm_conf conf;

static int take_bwap(int val, const char *optarg, int remote)
{
	char err[512];

	if (bwap_slurm_parse_option(optarg, &request, err, sizeof(err))) {
		slurm_error("bwap: --bwap=%s: %s", optarg ? optarg : "", err);
		return -1;
	}
	return 0;
}

static int take_tune(int val, const char *optarg, int remote)
{
	request.tune = 1;
	if (request.kind == BWAP_SLURM_OFF)
		request.kind = BWAP_SLURM_CANONICAL;
	return 0;
}

static struct spank_option options[] = {
	{ "bwap", "canonical|dwp|dwp:X|N:W,...",
	  "BWAP weighted interleave for each task: canonical weights for the task's own CPUs' "
	  "nodes (the default), dwp (canonical, then bwapd tunes), dwp:X (fixed DWP 0..1), or "
	  "explicit weights 0:5,1:3 / 5:3:1:1 (see slurm-bwap(8))", 2, 0, take_bwap },
	{ "bwap-tune", NULL,
	  "register each task with bwapd for online DWP tuning while it runs (implies --bwap)",
	  0, 0, take_tune },
	SPANK_OPTIONS_TABLE_END
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[512];

	if (bwap_slurm_parse_conf(ac, av, &conf, err, sizeof(err))) {
		slurm_error("bwap: %s", err);
		return -1;
	}
	for (struct spank_option *o = options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
			slurm_error("bwap: cannot register --%s", o->name);
			return -1;
		}
	return 0;
}

/*
 * After every option: bwapd starts the tasks it tunes at canonical
 * weights, so --bwap-tune with explicit weights or a fixed DWP is refused
 * here (srun and sbatch stop before the job is submitted).
 */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	char what[256];

	if (!request.tune || (request.kind != BWAP_SLURM_EXPLICIT && request.kind != BWAP_SLURM_DWP))
		return 0;
	slurm_error("bwap: --bwap-tune cannot be combined with these weights (%s): bwapd tunes from the canonical weights; "
		    "give --bwap --bwap-tune, or drop --bwap-tune to keep these weights",
		    bwap_slurm_request_text(&request, what, sizeof(what)));
	return -1;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct bwap_slurm_outcome out;
	char msg[2048];
	int r;

	if (!spank_remote(sp) || request.kind == BWAP_SLURM_OFF)
		return 0;
	r = bwap_slurm_task_apply(&request, &conf, &out, msg, sizeof(msg));
	/* the task's stderr is the job's: the user sees what each task got */
	fprintf(stderr, "%s\n", msg);
	fflush(stderr);
	return r < 0 ? -1 : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	pid_t pid;

	if (!spank_remote(sp) || request.kind == BWAP_SLURM_OFF)
		return 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return 0;
	/* only tasks bwapd tunes or places were registered */
	if (request.tune || bwap_kernel_mode() != BWAP_KERNEL_SERIES)
		bwap_slurm_task_forget(&conf, pid);
	return 0;
}
