// SPDX-License-Identifier: GPL-2.0
/*
 * spank.c, the SPANK glue, against a fake Slurm (tests/slurm/spank.h):
 * its callbacks called as srun (local), sbatch (allocator) and slurmstepd
 * (remote) call them, with a job environment, srun's command line and the
 * plugstack arguments each test sets.
 *  - --bwap=off refuses a partition's default= and clears a --bwap that
 *    srun took from a batch job's environment first;
 *  - default=: the partition's own entry over *;
 *  - a bad value that reaches slurmstepd fails each task with the reason
 *    on the task's stderr (the step is not failed with it only in
 *    slurmd's log);
 *  - a task bwap.so leaves alone carries no BWAP_* of an outer step;
 *  - srun --mem-bind=local --bwap is refused by srun, before an
 *    allocation, and a program's own --mem-bind argument is not read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>

#include "tap.h"
#include "../spank.c"

/* ---- the fake Slurm ------------------------------------------------------ */
static spank_context_t ctx;
static char *env[64];		/* the job's environment, "NAME=VALUE" */
static char last_error[2048];

int spank_remote(spank_t sp)
{
	return ctx == S_CTX_REMOTE;
}

spank_context_t spank_context(void)
{
	return ctx;
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;

	va_start(ap, item);
	if (item == S_TASK_PID)
		*va_arg(ap, pid_t *) = getpid();
	else
		*va_arg(ap, uint32_t *) = item == S_JOB_ID ? 42 : 0;
	va_end(ap);
	return ESPANK_SUCCESS;
}

static int env_find(const char *var)
{
	size_t n = strlen(var);

	for (int i = 0; i < 64; i++)
		if (env[i] && !strncmp(env[i], var, n) && env[i][n] == '=')
			return i;
	return -1;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	int i = env_find(var);

	if (i < 0)
		return ESPANK_ENV_NOEXIST;
	snprintf(buf, len, "%s", strchr(env[i], '=') + 1);
	return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
	int i = env_find(var);

	if (i >= 0 && !overwrite)
		return ESPANK_ENV_EXISTS;
	if (i < 0)
		for (i = 0; i < 64 && env[i]; i++)
			;
	if (i == 64)
		return ESPANK_NOSPACE;
	free(env[i]);
	if (asprintf(&env[i], "%s=%s", var, val) < 0)
		env[i] = NULL;
	return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
	int i = env_find(var);

	if (i >= 0) {
		free(env[i]);
		env[i] = NULL;
	}
	return ESPANK_SUCCESS;
}

void slurm_error(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(last_error, sizeof(last_error), format, ap);
	va_end(ap);
}

void slurm_info(const char *format, ...) {}
void slurm_verbose(const char *format, ...) {}
void slurm_debug(const char *format, ...) {}

/* ---- the tests ---------------------------------------------------------- */
static char dir[64];

/* A new job in context c: the plugin's state cleared, plugstack arguments args (NULL-ended). */
static void job(spank_context_t c, const char *const *args)
{
	char *av[16];
	int ac = 0;

	memset(&request, 0, sizeof(request));
	request_err[0] = conf_err[0] = job_err[0] = '\0';
	last_error[0] = '\0';
	for (int i = 0; i < 64; i++) {
		free(env[i]);
		env[i] = NULL;
	}
	while (args && args[ac] && ac < 15) {
		av[ac] = (char *)args[ac];
		ac++;
	}
	av[ac] = NULL;
	unsetenv("SLURM_MEM_BIND");
	unsetenv("SLURM_STEP_ID");
	ctx = c;
	slurm_spank_init(NULL, ac, av);
}

static int bwap_opt(const char *value)
{
	return options[0].cb(options[0].val, value, spank_remote(NULL));
}

/* task_init in a child whose stderr goes to a file; its return, stderr's text into out */
static int task_init_output(char *out, size_t len)
{
	char path[128];
	int fd, saved, rc;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	rc = slurm_spank_task_init(NULL, 0, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(fd);
	return rc;
}

static void set_cmdline(const char *const *argv)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cmdline", dir);
	f = fopen(path, "w");
	for (int i = 0; argv[i]; i++)
		fwrite(argv[i], 1, strlen(argv[i]) + 1, f);
	fclose(f);
	cmdline_path = path;
}

int main(void)
{
	static const char *const big_default[] = { "default=big:canonical", NULL };
	static const char *const gpu_off[] = { "default=*:canonical", "default=gpu:off", NULL };
	char out[2048];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/bwap-spank.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	set_cmdline((const char *const[]){ "srun", "--bwap", "prog", NULL });

	/* item 9: --bwap=off in a partition whose default is --bwap */
	job(S_CTX_REMOTE, big_default);
	spank_setenv(NULL, "SLURM_JOB_PARTITION", "big", 1);
	rc = bwap_opt("off");
	CHECK(!rc && !slurm_spank_init_post_opt(NULL, 0, NULL) && request.kind == BWAP_SLURM_OFF &&
	      !task_init_output(out, sizeof(out)) && env_find("BWAP_WEIGHTS") < 0,
	      "slurmstepd, partition big with default=big:canonical, --bwap=off: the task is left alone "
	      "(callback %d, kind %d; %s)", rc, request.kind, last_error);
	job(S_CTX_LOCAL, big_default);
	rc = bwap_opt("(null)");	/* sbatch --bwap, from SLURM_SPANK__SLURM_SPANK_OPTION_bwap_bwap */
	options[1].cb(options[1].val, NULL, 0);	/* and its --bwap-tune */
	rc |= bwap_opt("off");			/* then srun's own command line */
	CHECK(!rc && !slurm_spank_init_post_opt(NULL, 0, NULL) && request.kind == BWAP_SLURM_OFF && !request.tune,
	      "srun --bwap=off in a batch job of --bwap --bwap-tune: no BWAP, no tuning (kind %d, tune %d; %s)",
	      request.kind, request.tune, last_error);

	/* item 10: the partition's own default over * */
	job(S_CTX_REMOTE, gpu_off);
	spank_setenv(NULL, "SLURM_JOB_PARTITION", "gpu", 1);
	CHECK(!slurm_spank_init_post_opt(NULL, 0, NULL) && request.kind == BWAP_SLURM_OFF && !conf_err[0],
	      "default=*:canonical default=gpu:off: a gpu job gets no BWAP (kind %d; %s)", request.kind, conf_err);
	job(S_CTX_REMOTE, gpu_off);
	spank_setenv(NULL, "SLURM_JOB_PARTITION", "cpu", 1);
	CHECK(!slurm_spank_init_post_opt(NULL, 0, NULL) && request.kind == BWAP_SLURM_CANONICAL,
	      "default=*:canonical default=gpu:off: a cpu job gets --bwap (kind %d; %s)", request.kind, conf_err);

	/* item 14: a bad value that reaches slurmstepd: each task says why on its stderr */
	job(S_CTX_REMOTE, NULL);
	bwap_opt("5:3:x");
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == 0 && task_init_output(out, sizeof(out)) == -1 &&
	      strstr(out, "--bwap=5:3:x: weight 'x' for node 2 in '5:3:x' is not a whole number"),
	      "slurmstepd, --bwap=5:3:x: the step goes on to the tasks (init_post_opt %d), each fails saying why "
	      "on its stderr: '%s'", rc, out);

	/* item 14: stale BWAP_* of an outer step never reach a task bwap.so leaves alone */
	job(S_CTX_REMOTE, NULL);
	spank_setenv(NULL, "BWAP_WEIGHTS", "0:5,1:3", 1);
	spank_setenv(NULL, "BWAP_TUNED", "1", 1);
	spank_setenv(NULL, "BWAP_PLACEMENT", "set_mempolicy2 with own weights", 1);
	CHECK(!slurm_spank_init_post_opt(NULL, 0, NULL) && !task_init_output(out, sizeof(out)) &&
	      env_find("BWAP_WEIGHTS") < 0 && env_find("BWAP_TUNED") < 0 && env_find("BWAP_PLACEMENT") < 0,
	      "a nested step without --bwap: the outer step's BWAP_WEIGHTS, BWAP_TUNED, BWAP_PLACEMENT are gone");

	/* item 14: srun refuses --mem-bind with --bwap before it asks for an allocation */
	job(S_CTX_LOCAL, NULL);
	set_cmdline((const char *const[]){ "srun", "-N1", "-n", "2", "--mem-bind=local", "--bwap", "prog", NULL });
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == -1 && strstr(last_error, "--mem-bind=local and --bwap"),
	      "srun -n 2 --mem-bind=local --bwap: refused by srun (%d): %s", rc, last_error);
	job(S_CTX_LOCAL, NULL);
	set_cmdline((const char *const[]){ "srun", "--mem-bind", "map_mem:0,1", "--bwap", "prog", NULL });
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == -1 && strstr(last_error, "--mem-bind=map_mem:0,1 and --bwap"),
	      "srun --mem-bind map_mem:0,1 --bwap: refused by srun (%d): %s", rc, last_error);
	job(S_CTX_ALLOCATOR, NULL);
	set_cmdline((const char *const[]){ "sbatch", "--bwap", "--mem-bind=local", "job.sh", NULL });
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == -1 && strstr(last_error, "--mem-bind=local and --bwap"),
	      "sbatch --bwap --mem-bind=local: refused by sbatch (%d): %s", rc, last_error);
	job(S_CTX_LOCAL, NULL);
	set_cmdline((const char *const[]){ "srun", "-n", "2", "--overcommit", "--bwap", "prog", "--mem-bind=local",
					   NULL });
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == 0, "srun -n 2 --overcommit --bwap prog --mem-bind=local: the program's own argument is not "
	      "srun's (%d): %s", rc, last_error);
	job(S_CTX_LOCAL, NULL);
	set_cmdline((const char *const[]){ "srun", "--bwap", "prog", NULL });
	setenv("SLURM_MEM_BIND", "verbose,local", 1);
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == -1 && strstr(last_error, "--mem-bind=verbose,local"),
	      "srun --bwap under sbatch --mem-bind=local (SLURM_MEM_BIND): refused by srun (%d): %s", rc,
	      last_error);
	setenv("SLURM_STEP_ID", "0", 1);
	bwap_opt(NULL);
	rc = slurm_spank_init_post_opt(NULL, 0, NULL);
	CHECK(rc == 0, "... but not inside a step, where srun does not take SLURM_MEM_BIND (%d)", rc);
	unsetenv("SLURM_MEM_BIND");
	unsetenv("SLURM_STEP_ID");

	snprintf(out, sizeof(out), "rm -rf %s", dir);
	if (system(out))
		return 1;
	return tap_done();
}
