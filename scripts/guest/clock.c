// SPDX-License-Identifier: GPL-2.0
/*
 * Is the emulated clock honest?  Times the same instruction stream on one
 * CPU, in TSC ticks, while a second CPU spins on PAUSE and while it sleeps
 * (idle, halted), alternating the two, and prints the least of each:
 *
 *   clock [ITERATIONS [REPEATS [CPU_A CPU_B]]]
 *   clock: 1000000 iterations on CPU 0, CPU 1 spinning 3002871 ticks, sleeping 3002904 ticks
 *
 * On hardware, and on an emulator whose time follows each CPU's own
 * instructions, the two are about equal.  Stock Bochs counts a halted CPU
 * as "quantum" instructions per round of its SMP loop, so there the loop
 * takes two to three times as long while the other CPU sleeps.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "pin.h"

/* The instruction stream: ITERATIONS rounds of a two-instruction loop. */
static unsigned long long timed_loop(long iterations)
{
	unsigned long long t0, t1;
	long i = iterations;

	t0 = __rdtsc();
	asm volatile("1: sub $1, %0\n\tjnz 1b" : "+r"(i));
	t1 = __rdtsc();
	return t1 - t0;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 1000000;
	int repeats = argc > 2 ? atoi(argv[2]) : 5;
	int cpu_a = argc > 4 ? atoi(argv[3]) : 0;
	int cpu_b = argc > 4 ? atoi(argv[4]) : 1;
	unsigned long long spin = ~0ULL, asleep = ~0ULL, t;
	volatile int *go;
	pid_t pid;
	int r;

	if (iterations < 1 || repeats < 1) {
		fprintf(stderr, "usage: clock [ITERATIONS [REPEATS [CPU_A CPU_B]]]\n");
		return 2;
	}
	go = mmap(NULL, sizeof(*go), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (go == MAP_FAILED)
		return 2;
	pin(cpu_a);
	for (r = 0; r < repeats; r++) {
		/* CPU B spins on PAUSE: the loop runs once it has started. */
		*go = 0;
		pid = fork();
		if (pid < 0)
			return 2;
		if (!pid) {
			pin(cpu_b);
			*go = 1;
			for (;;)
				_mm_pause();
		}
		while (!*go)
			_mm_pause();
		t = timed_loop(iterations);
		if (t < spin)
			spin = t;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		/* CPU B has nothing to run: it sleeps in the idle loop. */
		usleep(1000);
		t = timed_loop(iterations);
		if (t < asleep)
			asleep = t;
	}
	printf("clock: %ld iterations on CPU %d, CPU %d spinning %llu ticks, sleeping %llu ticks\n",
	       iterations, cpu_a, cpu_b, spin, asleep);
	return 0;
}
