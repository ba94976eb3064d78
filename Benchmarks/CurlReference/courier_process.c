/* See include/courier_process.h. */
#define _GNU_SOURCE
#include "courier_process.h"

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

int courier_pin_thread(int tid, int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity((pid_t)tid, sizeof set, &set) == 0 ? 0 : errno;
}

double courier_process_cpu_seconds(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec +
           (double)usage.ru_stime.tv_usec / 1e6;
}

long courier_process_peak_rss_kib(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
    return usage.ru_maxrss;
}

int courier_process_trim_heap(void) { return malloc_trim(0); }
