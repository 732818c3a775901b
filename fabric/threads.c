/*
 * threads.c - helper threads pinned away from their caller's CPU, see threads.h.
 *
 * Left to the scheduler, a thread created for a few milliseconds of work often starts on its
 * creator's CPU, preempts it and finishes before the load balancer moves either of them: inside
 * OpenSM the routing thread lost 2.6 ms of 19 that way while the other CPU stayed idle.
 */
#include "threads.h"

#include <sched.h>

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
	if (!CPU_COUNT(&others) || pthread_attr_init(&attr))
		return -1;
	if (!pthread_attr_setaffinity_np(&attr, sizeof(others), &others) &&
	    !pthread_create(thread, &attr, fn, arg))
		rc = 0;
	pthread_attr_destroy(&attr);
	return rc;
}
