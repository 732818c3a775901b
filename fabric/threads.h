/*
 * threads.h - helper threads for work that runs beside the caller's (the Nue worker, the
 * plugin's allocation of OpenSM's hop tables).
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

#endif
