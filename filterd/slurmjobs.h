/*
 * slurmjobs.h - the jobs squeue reports, read from either of its two outputs: `squeue --json`
 * (Slurm 21.08 and later; the fields sarnue-filterd needs in the layouts of 22.05 and of the
 * newer releases) or the fixed text format SLURM_SQUEUE_FORMAT for older Slurm.  Only what the
 * filter decides on is kept: job id, state, partition, time limit and the hostlist expression.
 * Output that does not parse is rejected whole, naming the input and position, so a truncated
 * answer never looks like "those jobs ended".  So is a value squeue never writes, naming the
 * job: a NUL in a string, a node list or partition that is not a string, a RUNNING job without
 * nodes.
 */
#ifndef SARNUE_SLURMJOBS_H
#define SARNUE_SLURMJOBS_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

/* `squeue -h -o` format of the text parser: one job per line, the node list last. */
#define SLURM_SQUEUE_FORMAT "%i %T %P %l %N"

#define SLURM_TIME_UNLIMITED UINT32_MAX

struct slurm_job {
	uint32_t id;	     /* offsets into slurm_jobs.strings */
	uint32_t partition;  /* "" when not reported */
	uint32_t nodes;	     /* hostlist expression, "" when none */
	uint32_t time_limit; /* minutes, or SLURM_TIME_UNLIMITED */
	int running;
};

struct slurm_jobs {
	char *strings;
	size_t len, cap;
	struct slurm_job *v;
	uint32_t n, ncap;
};

void slurm_jobs_init(struct slurm_jobs *s);
void slurm_jobs_free(struct slurm_jobs *s);

/* "" before any string is stored: NULL + 0 is undefined, and GCC's -O1 warns about it. */
static inline const char *slurm_str(const struct slurm_jobs *s, uint32_t off)
{
	return s->strings ? s->strings + off : "";
}

/* Parses text[0..len); name is used in messages.  Replaces the contents of s. */
int slurm_jobs_parse_json(struct slurm_jobs *s, const char *text, size_t len, const char *name,
			  struct fab_error *err);
int slurm_jobs_parse_text(struct slurm_jobs *s, const char *text, size_t len, const char *name,
			  struct fab_error *err);

/*
 * Slurm's time notation as squeue's %l prints it: "UNLIMITED", "MM", "MM:SS", "HH:MM:SS",
 * "D-HH", "D-HH:MM", "D-HH:MM:SS"; minutes rounded up.  Returns 0 or -1.
 */
int slurm_parse_time(const char *s, size_t len, uint32_t *minutes);

#endif
