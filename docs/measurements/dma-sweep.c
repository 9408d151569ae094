/* The copy-worker sweep's shapes in plain pthreads, no OpenCL (issue #49): what idle
 * cores can give a work-group's double-buffered imports of strided elements or short
 * rows, on the same data sizes and repeated passes as `cts-runner bench --only workers`.
 *
 * G "groups" (one core each) stream through TILES tiles (shared among them) of TILE
 * floats: kind 1 gathers every STRIDE-th float, kind 2 rows of 16 floats STRIDE floats
 * apart. Each tile is then computed on (C dependent multiply-adds per float). Modes:
 *   0 inline : the group imports tile t itself at its wait (FerroCL without workers)
 *   1 split  : tile t+1 is issued in H+1 parts at t's wait; H helper cores of the group's
 *              own take H of them, the group takes the last at t+1's wait (FerroCL's
 *              workers: the group's wait moves parts too)
 *   2 helpers: the H helpers move all of tile t+1 while the group computes t
 *   3 prefetch: inline, prefetching the source 8 elements or rows ahead
 * DEMOTE (1): helpers push the lines they wrote to the shared cache (`cldemote`) after
 * each part, so the group reads them from there rather than from the helper's core.
 * Every pass runs every group's tiles once; the best of PASSES passes is printed as ns a
 * tile of one group and the source lines fetched per second.
 * Build: cc -O3 -march=x86-64-v3 -pthread dma-sweep.c -o dma-sweep
 * Run:   dma-sweep G H C KIND STRIDE TILE TILES PASSES MODE [HUGE [DEMOTE]]                      */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static float *src;
static int G, H, C, KIND, STRIDE, TILE, TILES, PASSES, MODE, PER, DEMOTE;
static size_t SPAN; /* floats of source a tile spans */
static pthread_barrier_t bar;
static _Atomic int stop;

typedef struct {
  int core;
  float *local[2];
  _Atomic long issued;    /* the tile whose parts helpers may take, -1 none */
  _Atomic int moved[2];   /* helper parts moved into buffer b */
  double sum, start, end;
  size_t base;
  char pad[64];
} group_t;
typedef struct { group_t *g; int hid, core; } helper_t;

static void pin(int core) {
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(core, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

/* Part `p` of `parts` of tile t into dst. */
static void import(group_t *g, long t, float *dst, int p, int parts, int ahead) {
  const float *s = src + g->base + (size_t)t * SPAN;
  if (KIND == 1) {
    int each = (TILE + parts - 1) / parts, lo = p * each, hi = lo + each > TILE ? TILE : lo + each;
    for (int i = lo; i < hi; i++) {
      if (ahead && i + ahead < hi) __builtin_prefetch(s + (size_t)(i + ahead) * STRIDE);
      dst[i] = s[(size_t)i * STRIDE];
    }
  } else {
    int rows = TILE / 16, each = (rows + parts - 1) / parts, lo = p * each, hi = lo + each > rows ? rows : lo + each;
    for (int r = lo; r < hi; r++) {
      if (ahead && r + ahead < hi) __builtin_prefetch(s + (size_t)(r + ahead) * STRIDE);
      memcpy(dst + r * 16, s + (size_t)r * STRIDE, 64);
    }
  }
}
/* Sixteen independent sums, as FerroCL's kernel sums across work-items in SIMD lanes: with
 * C = 0 the computation costs next to nothing (one dependent chain of 4096 adds would
 * cost ~5 us a tile and hide the copy's own time). */
static double compute(const float *x) {
  float acc[16] = {0};
  for (int i = 0; i < TILE; i += 16) {
    float v[16];
    for (int j = 0; j < 16; j++) v[j] = x[i + j];
    for (int k = 0; k < C; k++)
      for (int j = 0; j < 16; j++) v[j] = v[j] * 0.999f + 0.5f;
    for (int j = 0; j < 16; j++) acc[j] += v[j];
  }
  double s = 0;
  for (int j = 0; j < 16; j++) s += acc[j];
  return s;
}

static void *helper_main(void *p) {
  helper_t *h = p; group_t *g = h->g; pin(h->core);
  long served = -1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    long t = atomic_load_explicit(&g->issued, memory_order_acquire);
    if (t < 0 || t == served) { __builtin_ia32_pause(); continue; }
    int parts = MODE == 1 ? H + 1 : H;
    import(g, t, g->local[t & 1], h->hid, parts, 0);
    if (DEMOTE) {
      int each = (TILE + parts - 1) / parts;
      char *d = (char *)(g->local[t & 1] + h->hid * each);
      for (int b = 0; b < each * 4; b += 64) __asm__ volatile("cldemote %0" ::"m"(d[b]));
    }
    atomic_fetch_add_explicit(&g->moved[t & 1], 1, memory_order_release);
    served = t;
  }
  return NULL;
}

static void *group_main(void *p) {
  group_t *g = p; pin(g->core);
  for (int pass = 0; pass < PASSES + 1; pass++) {
    pthread_barrier_wait(&bar);
    g->start = now();
    double s = 0;
    if (MODE == 0 || MODE == 3) {
      for (long t = 0; t < PER; t++) {
        import(g, t, g->local[t & 1], 0, 1, MODE == 3 ? 8 : 0);
        s += compute(g->local[t & 1]);
      }
    } else {
      atomic_store_explicit(&g->issued, 0, memory_order_release);
      for (long t = 0; t < PER; t++) {
        if (MODE == 1) import(g, t, g->local[t & 1], H, H + 1, 0); /* the group's own part */
        while (atomic_load_explicit(&g->moved[t & 1], memory_order_acquire) < H) __builtin_ia32_pause();
        atomic_store_explicit(&g->moved[t & 1], 0, memory_order_relaxed);
        if (t + 1 < PER) atomic_store_explicit(&g->issued, t + 1, memory_order_release);
        s += compute(g->local[t & 1]);
      }
      /* Helpers' last served tile is PER-1; the next pass starts at 0 again. */
    }
    g->sum += s;
    g->end = now();
    pthread_barrier_wait(&bar);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 10) { fprintf(stderr, "usage: G H C KIND STRIDE TILE TILES PASSES MODE [HUGE [DEMOTE]]\n"); return 2; }
  G = atoi(argv[1]); H = atoi(argv[2]); C = atoi(argv[3]); KIND = atoi(argv[4]); STRIDE = atoi(argv[5]);
  TILE = atoi(argv[6]); TILES = atoi(argv[7]); PASSES = atoi(argv[8]); MODE = atoi(argv[9]);
  int huge = argc > 10 && atoi(argv[10]);
  DEMOTE = argc > 11 && atoi(argv[11]);
  if (MODE == 0 || MODE == 3) H = 0;
  PER = TILES / G < 2 ? 2 : TILES / G;
  SPAN = KIND == 1 ? (size_t)TILE * STRIDE : (size_t)TILE / 16 * STRIDE;
  size_t bytes = ((size_t)PER * G * SPAN * 4 + (2u << 20)) & ~(size_t)((2u << 20) - 1);
  src = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (src == MAP_FAILED) return 1;
  madvise(src, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  for (size_t i = 0; i < bytes / 4; i++) src[i] = 0.5f;
  group_t *gs = aligned_alloc(64, sizeof(group_t) * G);
  memset(gs, 0, sizeof(group_t) * G);
  helper_t *hs = calloc((size_t)G * (H ? H : 1), sizeof *hs);
  pthread_t *th = calloc((size_t)G * (H + 1), sizeof *th);
  pthread_barrier_init(&bar, NULL, G + 1);
  int core = 0, nt = 0;
  for (int i = 0; i < G; i++) {
    gs[i].core = core++; gs[i].base = (size_t)PER * SPAN * i;
    gs[i].local[0] = aligned_alloc(64, (size_t)TILE * 4); gs[i].local[1] = aligned_alloc(64, (size_t)TILE * 4);
    memset(gs[i].local[0], 0, (size_t)TILE * 4); memset(gs[i].local[1], 0, (size_t)TILE * 4);
    atomic_store(&gs[i].issued, -1);
  }
  for (int i = 0; i < G; i++)
    for (int j = 0; j < H; j++) {
      helper_t *h = &hs[i * H + j]; h->g = &gs[i]; h->hid = j; h->core = core++;
      pthread_create(&th[nt++], NULL, helper_main, h);
    }
  int first = nt;
  for (int i = 0; i < G; i++) pthread_create(&th[nt++], NULL, group_main, &gs[i]);
  double best = 1e30;
  for (int pass = 0; pass < PASSES + 1; pass++) {
    /* Helpers must not see the last pass's tile as new: reset before the groups start. */
    for (int i = 0; i < G; i++) atomic_store(&gs[i].issued, -1);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    /* Timed by the groups themselves: this thread may wake late where cores are few. */
    double t0 = gs[0].start, t1 = gs[0].end;
    for (int i = 1; i < G; i++) {
      if (gs[i].start < t0) t0 = gs[i].start;
      if (gs[i].end > t1) t1 = gs[i].end;
    }
    double t = t1 - t0;
    if (pass > 0 && t < best) best = t; /* the first pass warms */
  }
  for (int i = first; i < nt; i++) pthread_join(th[i], NULL);
  atomic_store(&stop, 1);
  for (int i = 0; i < first; i++) pthread_join(th[i], NULL);
  double chk = 0;
  for (int i = 0; i < G; i++) chk += gs[i].sum;
  double lines = (double)PER * G * (KIND == 1 ? (STRIDE >= 16 ? TILE : TILE * STRIDE / 16.0) : TILE / 16.0);
  printf("G=%d H=%d C=%d kind=%d stride=%d mode=%d huge=%d demote=%d ns_per_tile=%.0f Glines_s=%.3f chk=%.1e\n", G, H, C, KIND,
         STRIDE, MODE, huge, DEMOTE, best * 1e9 / PER, lines / best / 1e9, chk);
  return 0;
}
