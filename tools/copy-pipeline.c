/* Can other cores speed up one core's stream of tiles? The measurement behind the
 * copy engine's design (DESIGN.md, "On a 16-core host"): one consumer thread streams
 * 64 MiB in 16 KiB tiles and sums each; helper threads on other cores prepare tiles
 * ahead of it in a ring, as background copy workers would.
 *
 *   mode 0: the consumer copies each tile itself (memcpy), then sums it
 *   mode 1: helpers memcpy the tiles into the ring; the consumer only sums them
 *   mode 2: as 1, and helpers push the copied lines to the shared cache (cldemote)
 *   mode 3: helpers read each tile's source and push it to the shared cache
 *           (cldemote); the consumer copies and sums
 *   mode 4: as 3, the helpers only reading
 *
 * Build: cc -O2 -mavx2 -mcldemote tools/copy-pipeline.c -o copy-pipeline -lpthread
 * Run:   ./copy-pipeline MODE HELPERS   (the consumer on core 0, helpers on 1, 2, ...)
 * Prints the consumer's rate, the best of 8 runs, each with the source flushed. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TILE 16384
#define RING 4
#define BYTES ((size_t)64 << 20)

static char *src, *ring;
static int mode;
static long tiles = BYTES / TILE;
static _Atomic long ready[RING], claimed, consumed;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(long core) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(core % sysconf(_SC_NPROCESSORS_ONLN), &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void demote(char *p, size_t n) {
    for (size_t o = 0; o < n; o += 64) __asm__ volatile("cldemote (%0)" ::"r"(p + o));
}

static void *helper(void *core) {
    pin((long)core);
    for (;;) {
        long i = atomic_fetch_add(&claimed, 1);
        if (i >= tiles) return NULL;
        /* At most RING - 1 tiles ahead of the consumer. */
        while (i - atomic_load(&consumed) >= RING - 1) _mm_pause();
        char *d = ring + (i % RING) * TILE, *s = src + i * TILE;
        if (mode == 1 || mode == 2) {
            memcpy(d, s, TILE);
            if (mode == 2) demote(d, TILE);
        } else {
            volatile char x;
            for (size_t o = 0; o < TILE; o += 64) x = s[o];
            (void)x;
            if (mode == 3) demote(s, TILE);
        }
        atomic_store(&ready[i % RING], i + 1);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODE HELPERS\n", argv[0]);
        return 2;
    }
    mode = atoi(argv[1]);
    int helpers = atoi(argv[2]);
    if (helpers > 64) helpers = 64;
    src = aligned_alloc(4096, BYTES);
    ring = aligned_alloc(4096, TILE * RING);
    char *own = aligned_alloc(4096, TILE);
    memset(src, 1, BYTES);
    memset(ring, 0, TILE * RING);
    pin(0);
    double best = 1e9;
    __m256 acc = _mm256_setzero_ps();
    for (int run = 0; run < 8; run++) {
        atomic_store(&claimed, 0);
        atomic_store(&consumed, 0);
        for (int k = 0; k < RING; k++) atomic_store(&ready[k], 0);
        for (size_t o = 0; o < BYTES; o += 64) _mm_clflush(src + o);
        _mm_mfence();
        pthread_t th[64];
        double t = now();
        for (long h = 0; mode && h < helpers; h++) pthread_create(&th[h], NULL, helper, (void *)(h + 1));
        for (long i = 0; i < tiles; i++) {
            char *cur = own;
            if (mode == 0) {
                memcpy(own, src + i * TILE, TILE);
            } else {
                while (atomic_load(&ready[i % RING]) != i + 1) _mm_pause();
                if (mode >= 3)
                    memcpy(own, src + i * TILE, TILE);
                else
                    cur = ring + (i % RING) * TILE;
            }
            for (size_t o = 0; o < TILE; o += 32) acc = _mm256_add_ps(acc, _mm256_load_ps((float *)(cur + o)));
            atomic_store(&consumed, i + 1);
        }
        t = now() - t;
        for (int h = 0; mode && h < helpers; h++) pthread_join(th[h], NULL);
        if (t < best) best = t;
    }
    printf("mode %d, %d helpers: %.2f GB/s (%g)\n", mode, helpers, BYTES / best / 1e9, acc[0]);
    return 0;
}
