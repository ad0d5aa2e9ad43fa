// SPDX-License-Identifier: GPL-2.0
/*
 * Does the (emulated) monitor see every store?  CPU B arms UMONITOR on a
 * word and waits in UMWAIT; CPU A, which has written that page before the
 * monitor was armed (so that its TLB may hold a direct, writable entry for
 * it), waits until B is asleep and stores to the word.  Prints the median
 * and the largest time, in TSC ticks, from the store to B's wakeup:
 *
 *   monitor [ROUNDS [CPU_A CPU_B]]
 *   monitor: 300 stores from CPU 0 to CPU 1's UMWAIT, woken after p50 18 max 40 ticks
 *
 * On hardware, and on Bochs with bochs/0001, B wakes tens of ticks after
 * the store.  On stock Bochs, a store through a TLB entry made before the
 * monitor was armed bypasses the monitor, and B sleeps on to the UMWAIT
 * time limit (IA32_UMWAIT_CONTROL, 100000 ticks by default).  Before each
 * round, A drops its TLB entry for the page (mprotect()) and makes a new
 * one with a write while no monitor is armed, so that every store can
 * take that path.  In the
 * kernel's own wakeups of a polling CPU the waker writes with a locked
 * instruction through a TLB entry made while the page was monitored,
 * which stock Bochs does not hand out, so they never show the bug.
 * Needs WAITPKG; exits 3 without it.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "pin.h"

/* Ticks CPU A waits after B said it armed, so that B is in UMWAIT. */
#define SETTLE	20000ULL
/* UMWAIT's own deadline, beyond IA32_UMWAIT_CONTROL's default limit. */
#define DEADLINE	1000000ULL

struct shared {
	/* The monitored word, alone in its line, and A's time of store. */
	volatile unsigned long word __attribute__((aligned(64)));
	volatile unsigned long long stored;
	/* B's handshake, in another line: round armed, and delay seen. */
	volatile long armed __attribute__((aligned(64)));
	volatile long done;
	volatile long go;
	/* Written by A before B arms, to make A's TLB entry for the page. */
	volatile long scratch __attribute__((aligned(64)));
	volatile unsigned long long delay;
};

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static void umonitor(volatile void *p)
{
	asm volatile(".byte 0xf3, 0x0f, 0xae, 0xf0" :: "a"(p));
}

static void umwait(unsigned long long deadline)
{
	/* C0.1 */
	asm volatile(".byte 0xf2, 0x0f, 0xae, 0xf1"
		     :: "c"(1), "d"((unsigned int)(deadline >> 32)), "a"((unsigned int)deadline)
		     : "cc");
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	int cpu_a = argc > 3 ? atoi(argv[2]) : 0;
	int cpu_b = argc > 3 ? atoi(argv[3]) : 1;
	unsigned int a, b, c, d;
	unsigned long long *delay, t;
	struct shared *s;
	int r, status, early = 0;
	pid_t pid;

	if (rounds < 1) {
		fprintf(stderr, "usage: monitor [ROUNDS [CPU_A CPU_B]]\n");
		return 2;
	}
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & (1 << 5))) {
		fprintf(stderr, "monitor: no WAITPKG\n");
		return 3;
	}
	s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	delay = calloc(rounds, sizeof(*delay));
	if (s == MAP_FAILED || !delay)
		return 2;
	s->armed = s->done = s->go = -1;

	pin(cpu_a);
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		pin(cpu_b);
		for (r = 0; r < rounds; r++) {
			while (s->go != r)
				_mm_pause();
			umonitor(&s->word);
			s->armed = r;
			if (s->word == (unsigned long)r)
				umwait(__rdtsc() + DEADLINE);
			t = __rdtsc();
			while (s->word != (unsigned long)r + 1)
				_mm_pause();
			s->delay = t > s->stored ? t - s->stored : 0;
			s->done = r;
		}
		return 0;
	}
	s->word = 0;
	for (r = 0; r < rounds; r++) {
		/*
		 * Drop A's TLB entry for the page (mprotect() flushes it) and
		 * make a new one with a write while no monitor is armed on the
		 * page, then let B arm.
		 */
		if (mprotect((void *)s, 4096, PROT_READ) ||
		    mprotect((void *)s, 4096, PROT_READ | PROT_WRITE))
			return 2;
		s->scratch = r;
		s->go = r;
		while (s->armed != r)
			_mm_pause();
		t = __rdtsc();
		while (__rdtsc() - t < SETTLE)
			_mm_pause();
		s->stored = __rdtsc();
		s->word = r + 1;
		while (s->done != r)
			_mm_pause();
		delay[r] = s->delay;
		early += !delay[r];
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;
	qsort(delay, rounds, sizeof(*delay), cmp);
	printf("monitor: %d stores from CPU %d to CPU %d's UMWAIT, woken after p50 %llu max %llu ticks, %d early\n",
	       rounds, cpu_a, cpu_b, delay[rounds / 2], delay[rounds - 1], early);
	return 0;
}
