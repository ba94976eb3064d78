/* Process facts courier-bench needs that Swift's Glibc module does not offer (sched_setaffinity
 * needs _GNU_SOURCE). */
#ifndef COURIER_PROCESS_H
#define COURIER_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Pins thread `tid` (0: the calling thread) to CPU `cpu`. Returns 0, or an errno value. */
int courier_pin_thread(int tid, int cpu);

/* User plus system CPU seconds this process has used (-1 when getrusage fails). */
double courier_process_cpu_seconds(void);

/* This process's peak resident set size in KiB (-1 when getrusage fails). */
long courier_process_peak_rss_kib(void);

/* Hands freed heap memory back to the system (glibc's malloc_trim), so that a later peak of the
 * resident set measures new allocations only. Returns 1 when memory was released, else 0. */
int courier_process_trim_heap(void);

#ifdef __cplusplus
}
#endif

#endif
