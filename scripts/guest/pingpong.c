// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-CPU wakeup latency, as a pipe ping-pong between two processes pinned
 * to two CPUs: each round trip is two wakeups of a task whose CPU went idle
 * in between.  Prints the percentiles of the round-trip time, in ns of
 * CLOCK_MONOTONIC (emulated time under Bochs).
 *
 * With -s, CPU A never goes idle: it spins for GAP_NS before each round, so
 * that CPU B is idle by then, and on a non-blocking read for the reply, so
 * only CPU B's wakeup is timed, and nothing A does after its store (such
 * as arming a monitor of its own when it idles) can end B's wait in its
 * place.
 *
 *   pingpong [-s] [ROUNDS [CPU_A CPU_B]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#define WARMUP	100
#define GAP_NS	30000

static void xfer(int rfd, int wfd, int first)
{
	char c = 0;
	ssize_t r;

	if (first && write(wfd, &c, 1) != 1)
		exit(2);
	/* EAGAIN only with -s, where rfd does not block. */
	while ((r = read(rfd, &c, 1)) < 0 && errno == EAGAIN)
		;
	if (r != 1)
		exit(2);
	if (!first && write(wfd, &c, 1) != 1)
		exit(2);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int spin = argc > 1 && !strcmp(argv[1], "-s");
	int rounds, cpu_a, cpu_b, ab[2], ba[2], i, status;
	long long *rtt, t;
	pid_t pid;

	argc -= spin;
	argv += spin;
	rounds = argc > 1 ? atoi(argv[1]) : 1000;
	cpu_a = argc > 3 ? atoi(argv[2]) : 0;
	cpu_b = argc > 3 ? atoi(argv[3]) : 1;
	if (rounds < 1 || pipe(ab) || pipe(ba) ||
	    (spin && fcntl(ba[0], F_SETFL, O_NONBLOCK))) {
		fprintf(stderr, "usage: pingpong [-s] [ROUNDS [CPU_A CPU_B]]\n");
		return 2;
	}
	rtt = calloc(rounds, sizeof(*rtt));
	if (!rtt)
		return 2;

	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		pin(cpu_b);
		for (i = 0; i < WARMUP + rounds; i++)
			xfer(ab[0], ba[1], 0);
		return 0;
	}
	pin(cpu_a);
	for (i = 0; i < WARMUP + rounds; i++) {
		if (spin) {
			t = now_ns();
			while (now_ns() - t < GAP_NS)
				;
		}
		t = now_ns();
		xfer(ba[0], ab[1], 1);
		if (i >= WARMUP)
			rtt[i - WARMUP] = now_ns() - t;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;

	qsort(rtt, rounds, sizeof(*rtt), cmp);
	printf("pingpong%s: %d round trips, CPU %d <-> CPU %d, ns: p50 %lld p90 %lld p99 %lld max %lld\n",
	       spin ? " -s" : "", rounds, cpu_a, cpu_b, rtt[rounds / 2], rtt[rounds * 90 / 100],
	       rtt[rounds * 99 / 100], rtt[rounds - 1]);
	return 0;
}
