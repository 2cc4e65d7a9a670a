// SPDX-License-Identifier: GPL-2.0
/*
 * tt-execplace: where exec balancing puts a task whose affinity leaves out
 * an idle SMT sibling (guest/init t_seed001, the placement check).
 *
 *   tt-execplace FROM ALLOWED [--spin]
 *
 * Runs on CPU FROM (affinity FROM only, waits until it is there), widens
 * its affinity to the CPU list ALLOWED (which contains FROM, so it is not
 * migrated) and at once execs itself.  sched_exec() then chooses a CPU
 * with select_task_rq_fair(WF_EXEC): sched_balance_find_dst_cpu(),
 * sched_balance_find_dst_group() and update_sg_wakeup_stats(), which since
 * seed 001's fix (82d6e01a0699) counts only the CPUs in the task's
 * affinity.  The new image prints, as the first thing it does,
 *
 *   from=F placed=P
 *
 * F the CPU it ran on just before the exec, P the CPU it runs on right
 * after (sched_getcpu(); nothing else is in between but the exec itself).
 * With --spin the new image then burns CPU until it is killed: a hog that
 * exec balancing placed (guest/init t_diag, the stacking workload).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_cpus(const char *s, cpu_set_t *set)
{
	char *end;

	CPU_ZERO(set);
	while (*s) {
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0 || a >= CPU_SETSIZE)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= CPU_SETSIZE)
				return -1;
		}
		for (; a <= b; a++)
			CPU_SET(a, set);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return CPU_COUNT(set) ? 0 : -1;
}

int main(int argc, char **argv)
{
	cpu_set_t one, allowed;
	char from[16];
	int cpu, i;

	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--placed")) {
		cpu = sched_getcpu();
		printf("from=%s placed=%d\n", argv[2], cpu);
		fflush(stdout);
		if (argc == 4)
			for (;;)
				;
		return 0;
	}
	if ((argc != 3 && !(argc == 4 && !strcmp(argv[3], "--spin"))) || parse_cpus(argv[2], &allowed) < 0) {
		fprintf(stderr, "usage: tt-execplace FROM ALLOWED [--spin]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (!CPU_ISSET(cpu, &allowed) || sched_setaffinity(0, sizeof(one), &one) < 0) {
		perror("tt-execplace: FROM");
		return 2;
	}
	for (i = 0; sched_getcpu() != cpu && i < 1000; i++)
		sched_yield();
	if (sched_setaffinity(0, sizeof(allowed), &allowed) < 0) {
		perror("tt-execplace: ALLOWED");
		return 2;
	}
	snprintf(from, sizeof(from), "%d", sched_getcpu());
	execl("/proc/self/exe", "tt-execplace", "--placed", from, argc == 4 ? "--spin" : (char *)NULL,
	      (char *)NULL);
	perror("tt-execplace: exec");
	return 2;
}
