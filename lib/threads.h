/*
 * threads.h - helper threads for work that runs beside the caller's (the Nue worker, the
 * plugin's allocation of OpenSM's hop tables, sar-dfsssp's overflow work beside its layering),
 * and the gate that keeps one such piece of work off the second CPU while an engine still
 * needs it.
 */
#ifndef SARNUE_THREADS_H
#define SARNUE_THREADS_H

#include <pthread.h>

/*
 * Starts fn(arg) on a thread allowed only on the CPUs the calling thread may use, except the
 * one it is on.  Returns 0 when the thread runs, -1 when there is no other CPU or no thread:
 * the caller then does the work itself, which is as fast as sharing one CPU.
 */
int thread_start_beside(pthread_t *thread, void *(*fn)(void *), void *arg);

/*
 * Starts fn(arg) on a thread of idle priority (SCHED_IDLE, inherited by the threads it starts):
 * it runs only on CPU time no other thread wants, so the caller's own work is not slowed by it.
 * Unpinned, it takes every CPU once the caller is done.  Returns 0 when the thread runs, -1 when
 * the caller may use only one CPU (the thread would get nothing before the caller ends) or no
 * thread could be made.
 */
int thread_start_idle(pthread_t *thread, void *(*fn)(void *), void *arg);

/*
 * The second CPU of a routing, shared between the engine and its caller.  The caller's own
 * work beside the routing (the plugin's hop rows) waits at the gate; the engine opens it once
 * its own helper threads are done with the CPU, or at once when it has none.  Opening twice is
 * harmless, and every function accepts NULL (nobody waits).
 */
struct cpu_gate {
	pthread_mutex_t lock;
	pthread_cond_t opened;
	int open;
};

/* A mutex and the condition waited for under it, made together; 0, or -1 with neither made. */
int lock_and_cond_init(pthread_mutex_t *lock, pthread_cond_t *cond);
void lock_and_cond_destroy(pthread_mutex_t *lock, pthread_cond_t *cond);

/* A closed gate; -1 when the mutex or condition cannot be created. */
int cpu_gate_init(struct cpu_gate *g);
void cpu_gate_destroy(struct cpu_gate *g);
void cpu_gate_open(struct cpu_gate *g);
/* Returns when the gate is open. */
void cpu_gate_wait(struct cpu_gate *g);

#endif
