/* SPDX-License-Identifier: GPL-2.0 */
/* The guest tools' one shared helper: pin the calling process to a CPU. */
#ifndef GUEST_PIN_H
#define GUEST_PIN_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static inline void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
}

#endif
