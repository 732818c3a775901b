/*
 * threads.c - helper threads pinned away from their caller's CPU or at idle priority, and the
 * gate for work that must wait until the engine is done with that CPU; see threads.h.
 *
 * Left to the scheduler, a thread created for a few milliseconds of work often starts on its
 * creator's CPU, preempts it and finishes before the load balancer moves either of them: inside
 * OpenSM the routing thread lost 2.6 ms of 19 that way while the other CPU stayed idle.
 */
#include "lib/threads.h"
#include "lib/assert.h"

#include <sched.h>
#include <stdlib.h>

int thread_start_beside(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	cpu_set_t allowed, others;
	pthread_attr_t attr;
	int here = sched_getcpu(), cpu, rc = -1;

	if (here < 0 || sched_getaffinity(0, sizeof(allowed), &allowed))
		return -1;
	CPU_ZERO(&others);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (cpu != here && CPU_ISSET(cpu, &allowed))
			CPU_SET(cpu, &others);
	sn_assert(CPU_COUNT(&others) <= CPU_COUNT(&allowed));
	if (!CPU_COUNT(&others) || pthread_attr_init(&attr))
		return -1;
	if (!pthread_attr_setaffinity_np(&attr, sizeof(others), &others) &&
	    !pthread_create(thread, &attr, fn, arg))
		rc = 0;
	pthread_attr_destroy(&attr);
	return rc;
}

struct idle_start {
	void *(*fn)(void *);
	void *arg;
};

/*
 * The thread lowers its own policy: glibc's pthread_attr_setschedpolicy refuses SCHED_IDLE
 * (EINVAL on Debian 12), while a thread may always lower its own.
 */
static void *idle_main(void *start)
{
	struct idle_start s = *(struct idle_start *)start;
	struct sched_param idle = { 0 };

	free(start);
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
	return s.fn(s.arg);
}

int thread_start_idle(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	struct idle_start *start;
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) || CPU_COUNT(&allowed) < 2)
		return -1;
	start = malloc(sizeof(*start));
	if (!start)
		return -1;
	*start = (struct idle_start){ .fn = fn, .arg = arg };
	if (pthread_create(thread, NULL, idle_main, start)) {
		free(start);
		return -1;
	}
	return 0;
}

int lock_and_cond_init(pthread_mutex_t *lock, pthread_cond_t *cond)
{
	if (pthread_mutex_init(lock, NULL))
		return -1;
	if (pthread_cond_init(cond, NULL)) {
		pthread_mutex_destroy(lock);
		return -1;
	}
	return 0;
}

void lock_and_cond_destroy(pthread_mutex_t *lock, pthread_cond_t *cond)
{
	pthread_cond_destroy(cond);
	pthread_mutex_destroy(lock);
}

int cpu_gate_init(struct cpu_gate *g)
{
	g->open = 0;
	return lock_and_cond_init(&g->lock, &g->opened);
}

void cpu_gate_destroy(struct cpu_gate *g)
{
	if (g)
		lock_and_cond_destroy(&g->lock, &g->opened);
}

void cpu_gate_open(struct cpu_gate *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->open = 1;
	pthread_cond_broadcast(&g->opened);
	pthread_mutex_unlock(&g->lock);
}

void cpu_gate_wait(struct cpu_gate *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->opened, &g->lock);
	/* A gate once open stays open: nothing ever closes it again. */
	sn_assert(g->open == 1);
	pthread_mutex_unlock(&g->lock);
}
