// SPDX-License-Identifier: GPL-2.0
/*
 * bwap.so, the SPANK glue: the --bwap and --bwap-tune options of srun,
 * sbatch and salloc, checked where the user types them (so srun refuses a
 * bad value before the job starts) and again in slurmstepd, where
 * slurm_spank_init_post_opt fails the step before any task runs if the
 * request cannot be honoured here; then the per-task hooks:
 * slurm_spank_task_init (in the task, after Slurm bound its CPUs and
 * memory and before exec) places it, slurm_spank_task_exit (in
 * slurmstepd) makes bwapd forget it.  The work is in task.c, the parsing
 * and the site's policy in option.c.
 *
 * Nothing here can fail in slurmd's own context: a bad plugstack.conf
 * line is remembered, logged, and fails only the jobs that ask for
 * --bwap, with the file and line named on each task's stderr.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "bwap_slurm.h"

SPANK_PLUGIN(bwap, 1);

/*
 * Set by the option callbacks, which run in srun/sbatch and again in
 * slurmstepd before it forks the tasks, so every task sees them.  A bad
 * value is kept in request_err (the request itself stays as it was) and
 * fails the job in init_post_opt: Slurm only logs a failed option
 * callback in slurmstepd, and the value can come from the job's
 * environment (sbatch's, or another host's srun) unchecked.
 */
static struct bwap_slurm_request request;
static char request_err[640];
static struct bwap_slurm_conf conf;
static char conf_err[1500];
static char job_err[1024];	/* slurmstepd: this job may not have --bwap here (task_init says why) */

/*
 * Where Slurm's plugstack files are, to name the bad line: Debian's
 * paths, the conffile slurm-bwap links there, and slurmd's copy under
 * configless Slurm (/run/slurm/conf, SlurmdSpoolDir's conf-cache).
 */
static const char *const plugstack_files[] = {
	"/etc/slurm/plugstack.conf.d/bwap.conf", "/etc/slurm/bwap/plugstack.conf", "/etc/slurm/plugstack.conf",
	"/run/slurm/conf/plugstack.conf", "/run/slurm/conf/bwap.conf", NULL
};

/* srun's own command line, for --mem-bind (the tests point it at a file) */
static const char *cmdline_path = "/proc/self/cmdline";

/*
 * What the task's environment says BWAP did: set for a task bwap.so
 * placed, removed from every other task (a nested srun's, a step without
 * --bwap), so that none reads what its parent step got.
 */
static const char *const outcome_vars[] = {
	"BWAP_WEIGHTS", "BWAP_WORKERS", "BWAP_ALLOWED_NODES", "BWAP_KERNEL", "BWAP_PLACEMENT", "BWAP_TUNED",
	"BWAP_MESSAGE", NULL
};

static int take_bwap(int val, const char *optarg, int remote)
{
	char err[512];

	if (bwap_slurm_parse_option(optarg, &request, err, sizeof(err))) {
		snprintf(request_err, sizeof(request_err), "--bwap=%s: %s", optarg ? optarg : "", err);
		slurm_error("bwap: %s", request_err);
		return -1;
	}
	return 0;
}

static int take_tune(int val, const char *optarg, int remote)
{
	request.tune = 1;
	request.off_given = 0;
	if (request.kind == BWAP_SLURM_OFF)
		request.kind = BWAP_SLURM_CANONICAL;
	return 0;
}

static struct spank_option options[] = {
	{ "bwap", "canonical|dwp|dwp:X|N:W,...|off",
	  "BWAP weighted interleave for each task: canonical weights for the task's own CPUs' "
	  "nodes (the default), dwp (canonical, then bwapd tunes), dwp:X (fixed DWP 0..1), "
	  "explicit weights 0:5,1:3 / 5:3:1:1, or off (no BWAP, whatever the partition's default "
	  "or the batch job's --bwap; see slurm-bwap(8))", 2, 0, take_bwap },
	{ "bwap-tune", NULL,
	  "register each task with bwapd for online DWP tuning while it runs (implies --bwap)",
	  0, 0, take_tune },
	SPANK_OPTIONS_TABLE_END
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[768], where[600];

	if (bwap_slurm_parse_conf(ac, av, &conf, err, sizeof(err))) {
		if (bwap_slurm_conf_locate(plugstack_files, ac, av, where, sizeof(where)))
			snprintf(where, sizeof(where), "plugstack.conf, the bwap.so line");
		snprintf(conf_err, sizeof(conf_err), "%s: %s; jobs with --bwap fail until it is fixed "
			 "(slurm-bwap(8) lists the arguments)", where, err);
		/* logged once where it is read; slurmd goes on, jobs without --bwap too */
		slurm_error("bwap: %s", conf_err);
		/* keep the defaults, so that the options below still mean something */
		bwap_slurm_parse_conf(0, NULL, &conf, err, sizeof(err));
	}
	/* slurmd and the prolog/epilog take no options */
	if (spank_context() == S_CTX_SLURMD || spank_context() == S_CTX_JOB_SCRIPT)
		return 0;
	for (struct spank_option *o = options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
			/* srun would go on without --bwap: say so, do not stop everyone's jobs */
			slurm_error("bwap: cannot register --%s; --bwap is not offered", o->name);
			return 0;
		}
	return 0;
}

/* A variable of the job's environment (remote) or of srun's own (local); NULL if unset. */
static const char *job_env(spank_t sp, const char *name, char *buf, int len)
{
	if (spank_remote(sp))
		return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS ? buf : NULL;
	return getenv(name);
}

/*
 * srun's (sbatch's, salloc's) --mem-bind, before an allocation exists:
 * from its command line, else from SLURM_MEM_BIND, which it takes as
 * --mem-bind (inherited from sbatch --mem-bind; not inside a step, where
 * srun ignores it).  Slurm exports SLURM_MEM_BIND_TYPE only to the tasks.
 */
static const char *launcher_mem_bind(char *buf, size_t len)
{
	char *argv[256], text[16384];
	const char *v;
	size_t n = 0;
	int argc = 0, fd = open(cmdline_path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t got;

		while (n < sizeof(text) - 1 && (got = read(fd, text + n, sizeof(text) - 1 - n)) > 0)
			n += got;
		close(fd);
	}
	text[n] = '\0';
	for (size_t i = 0; i < n && argc < 256; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	v = bwap_slurm_cmdline_mem_bind(argc, argv, buf, len);
	if (!v && !getenv("SLURM_STEP_ID") && getenv("SLURM_MEM_BIND")) {
		snprintf(buf, len, "%s", getenv("SLURM_MEM_BIND"));
		v = buf;
	}
	return v;
}

/*
 * After every option, in srun/sbatch/salloc and again in slurmstepd:
 * everything that would stop the job is decided here, before any task
 * runs.  In slurmstepd an error fails the step.
 */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	char err[1024], part[128], bind[256];
	const char *partition, *mem_bind;

	if (spank_context() != S_CTX_LOCAL && spank_context() != S_CTX_REMOTE &&
	    spank_context() != S_CTX_ALLOCATOR)
		return 0;
	if (request_err[0]) {
		slurm_error("bwap: %s", request_err);
		/* in slurmstepd each task says it on its stderr as it fails (task_init) */
		return spank_remote(sp) ? 0 : -1;
	}
	partition = job_env(sp, "SLURM_JOB_PARTITION", part, sizeof(part));
	if (spank_remote(sp) && bwap_slurm_partition_default(&conf, partition, &request))
		slurm_verbose("bwap: partition %s: --bwap by default (plugstack.conf: default=)", partition);
	if (request.kind == BWAP_SLURM_OFF)
		return 0;
	/*
	 * A bad plugstack line: srun refuses at once; in slurmstepd each
	 * task does (task_init), because its stderr is where the user reads
	 * why, and slurmstepd's error only reaches the node's log.
	 */
	if (conf_err[0] && !spank_remote(sp)) {
		slurm_error("bwap: %s", conf_err);
		return -1;
	}
	mem_bind = spank_remote(sp) ? job_env(sp, "SLURM_MEM_BIND_TYPE", bind, sizeof(bind)) :
				      launcher_mem_bind(bind, sizeof(bind));
	if (bwap_slurm_job_check(&request, &conf, partition, mem_bind, err, sizeof(err))) {
		slurm_error("bwap: %s", err);
		/*
		 * In slurmstepd each task says it on its stderr and fails
		 * (task_init), before the program runs: slurmstepd's own error
		 * reaches only the node's log, and srun would say no more than
		 * "Plugin initialization failed".
		 */
		if (!spank_remote(sp))
			return -1;
		snprintf(job_err, sizeof(job_err), "%s", err);
	}
	return 0;
}

/* BWAP_* in the task's environment: what it got, for the program and its scripts. */
static void export_outcome(spank_t sp, const struct bwap_slurm_outcome *o, int r, const char *msg)
{
	char buf[160];

	for (int i = 0; outcome_vars[i]; i++)
		spank_unsetenv(sp, outcome_vars[i]);
	if (r == 0) {
		spank_setenv(sp, "BWAP_WEIGHTS", o->weights, 1);
		spank_setenv(sp, "BWAP_WORKERS", bwap_nodeset_format(o->workers, buf, sizeof(buf)), 1);
		spank_setenv(sp, "BWAP_ALLOWED_NODES", bwap_nodeset_format(o->allowed, buf, sizeof(buf)), 1);
		spank_setenv(sp, "BWAP_KERNEL", bwap_kernel_mode_name(o->kernel), 1);
		spank_setenv(sp, "BWAP_PLACEMENT", o->how, 1);
		/* bwapd searches the DWP only of tasks that asked (--bwap-tune), where the site allows it */
		spank_setenv(sp, "BWAP_TUNED", o->tuned ? "1" : "0", 1);
	} else {
		/* missing=run: the task runs untouched, and can tell */
		spank_setenv(sp, "BWAP_PLACEMENT", "none", 1);
	}
	spank_setenv(sp, "BWAP_MESSAGE", msg, 1);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct bwap_slurm_outcome out;
	struct bwap_slurm_request r = request;
	uint32_t job = 0, step = 0, task = 0;
	char msg[2048];
	int ret;

	if (!spank_remote(sp))
		return 0;
	/* a task untouched: nothing of an outer step's placement in its environment */
	if (r.kind == BWAP_SLURM_OFF && !request_err[0]) {
		for (int i = 0; outcome_vars[i]; i++)
			spank_unsetenv(sp, outcome_vars[i]);
		return 0;
	}
	/* a bad value, a bad plugstack line or the site's policy: said on the task's stderr, the task fails */
	if (request_err[0] || conf_err[0] || job_err[0]) {
		char host[64] = "?";

		gethostname(host, sizeof(host) - 1);
		fprintf(stderr, "bwap: %s: %s\n", host, request_err[0] ? request_err : conf_err[0] ? conf_err : job_err);
		return -1;
	}
	if (spank_get_item(sp, S_JOB_ID, &job) == ESPANK_SUCCESS &&
	    spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS &&
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &task) == ESPANK_SUCCESS) {
		r.job = job;
		r.step = step;
		r.task = task;
	}
	ret = bwap_slurm_task_apply(&r, &conf, &out, msg, sizeof(msg));
	export_outcome(sp, &out, ret, msg);
	/*
	 * What went wrong, or was only half done, the user must see: the
	 * task's stderr is the job's.  A placement that went as asked goes
	 * to slurmstepd's log (one line per task is noise at 10,000 tasks),
	 * and to stderr with report=stderr; BWAP_* says it to the task.
	 */
	if (ret != 0 || out.warning || conf.report_stderr) {
		fprintf(stderr, "%s\n", msg);
		fflush(stderr);
	}
	if (ret < 0)
		slurm_error("%s", msg);
	else
		slurm_verbose("%s", msg);
	return ret < 0 ? -1 : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	pid_t pid;

	if (!spank_remote(sp) || request.kind == BWAP_SLURM_OFF || request_err[0] || conf_err[0] || job_err[0])
		return 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return 0;
	/* only tasks bwapd tunes or places were registered; at most BWAP_SLURM_DETACH_MS each */
	if (request.tune || bwap_kernel_mode() != BWAP_KERNEL_SERIES)
		bwap_slurm_task_forget(&conf, pid);
	return 0;
}
