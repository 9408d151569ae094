/* How much compute the host gives T threads: what bounds any kernel's scaling from 1
 * to T cores (DESIGN.md, "What the host gives compute code"). Each thread runs ten
 * independent AVX2 FMA chains, bound by the FMA ports, not by latency or memory; a
 * VM's vCPUs may share physical cores, and turbo clocks fall as cores wake.
 *
 *   fma-ceiling pairs : a thread on cpu 0 alone, then beside one on cpu j (j = 1..N-1):
 *                       a ratio near 0.5 means cpu j shares cpu 0's physical core.
 *   fma-ceiling T     : T threads on cpus 0..T-1 at once: their sum / one thread alone.
 *
 * Build: cc -O2 -mavx2 -mfma tools/fma-ceiling.c -o fma-ceiling -lpthread */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static pthread_barrier_t start;
static double rate[MAX_THREADS]; /* GFLOP/s of the thread on each cpu */
static float sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* GFLOP/s of ten independent FMA chains: enough in flight to keep two FMA ports busy
 * at a 4-cycle latency. The empty asm keeps the chains in registers. */
static double fma_rate(void) {
    __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
    __m256 a0 = _mm256_set1_ps(0.1f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0,
           a9 = a0;
    long n = 30000000;
    double t = now();
    for (long i = 0; i < n; i++) {
#define STEP(x) x = _mm256_fmadd_ps(x, m, c);
        STEP(a0) STEP(a1) STEP(a2) STEP(a3) STEP(a4) STEP(a5) STEP(a6) STEP(a7) STEP(a8) STEP(a9)
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7),
                         "+x"(a8), "+x"(a9));
    }
    t = now() - t;
    __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                               _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    sink += _mm256_add_ps(sum, _mm256_add_ps(a8, a9))[0];
    return 10.0 * n * 16 / t / 1e9; /* 8 lanes, 2 flops each */
}

static void *thread(void *cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET((long)cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
    pthread_barrier_wait(&start);
    rate[(long)cpu] = fma_rate();
    return NULL;
}

/* Runs one thread on each of `n` cpus at once; returns the sum of their rates. */
static double together(int n, const long *cpus) {
    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&start, NULL, n);
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, thread, (void *)cpus[i]);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += rate[cpus[i]];
    return sum;
}

int main(int argc, char **argv) {
    int cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
    if (argc < 2 || cpus_online > MAX_THREADS) {
        fprintf(stderr, "usage: %s pairs | THREADS\n", argv[0]);
        return 2;
    }
    long cpus[MAX_THREADS];
    cpus[0] = 0;
    double alone = together(1, cpus);
    printf("1 thread on cpu 0: %.1f GFLOP/s\n", alone);
    if (!strcmp(argv[1], "pairs")) {
        for (long j = 1; j < cpus_online; j++) {
            cpus[1] = j;
            together(2, cpus);
            printf("cpu 0 beside cpu %ld: %.2f of alone\n", j, rate[0] / alone);
        }
        return 0;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > cpus_online) n = cpus_online;
    for (int i = 0; i < n; i++) cpus[i] = i;
    double sum = together(n, cpus), slowest = rate[0];
    for (int i = 0; i < n; i++)
        if (rate[i] < slowest) slowest = rate[i];
    printf("%d threads: %.1f GFLOP/s together, %.2fx one thread (slowest thread %.2f of alone)\n", n, sum,
           sum / alone, slowest / alone);
    return 0;
}
