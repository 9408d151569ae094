/* Can copy workers speed up a work-group's 2D imports of short rows (64 bytes, pages
 * apart), when the group already prefetches rows ahead?  Plain pthreads, no OpenCL: the
 * physics behind FerroCL's copy-worker cost model for 2D tiles (issue #49).
 *
 * G "groups" (one core each) stream through tiles of TILE bytes gathered from rows of ROW
 * bytes, PITCH bytes apart, into a local double buffer, and compute C multiply-adds per
 * float of each tile. Modes:
 *   0 inline   : the group copies tile t at its wait, rows one by one (no prefetch)
 *   1 ahead    : the same, prefetching the source 8 rows ahead (FerroCL's engine)
 *   2 helpers  : H helper cores copy tile t+1 into the other buffer while the group
 *                computes tile t (the copy workers)
 *   3 touch    : H helper cores read tile t+1's source lines while the group computes
 *                tile t; the group then copies it itself, prefetching (read-ahead workers)
 *   4 owned    : as 2, the helpers also prefetching the destination for writing
 *   5 private  : as 2, into buffers of the helpers' own (what the group's lines cost)
 * Prints ns per tile. Build: cc -O2 -pthread dma-rows.c -o dma-rows
 * Run: dma-rows G H C ROW PITCH TILE TILES MODE                                          */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *src;
static int G, H, C, ROW, PITCH, TILE, TILES, MODE, ROWS;
static size_t PER; /* source bytes per group */

typedef struct {
  int core;
  char *local[2];
  _Atomic long want;
  _Atomic int done[2];
  double sum;
  char *base;
} group_t;
typedef struct { group_t *g; int hid, core; } helper_t;
static _Atomic int stop;

static void pin(int core) {
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(core, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static inline void copy_rows(group_t *g, long t, char *dst, int lo, int hi, int ahead) {
  const char *s = g->base + (size_t)t * ROWS * PITCH;
  for (int r = lo; r < hi; r++) {
    if (ahead && r + 8 < hi)
      for (int b = 0; b < ROW; b += 64) _mm_prefetch(s + (size_t)(r + 8) * PITCH + b, _MM_HINT_T0);
    if (ahead == 2 && r + 8 < hi)
      for (int b = 0; b < ROW; b += 64) _m_prefetchw(dst + (size_t)(r + 8) * ROW + b);
    memcpy(dst + (size_t)r * ROW, s + (size_t)r * PITCH, ROW);
  }
}
static inline void touch_rows(group_t *g, long t, int lo, int hi, volatile char *sink) {
  const char *s = g->base + (size_t)t * ROWS * PITCH;
  char x = 0;
  for (int r = lo; r < hi; r++)
    for (int b = 0; b < ROW; b += 64) x += s[(size_t)r * PITCH + b];
  *sink = x;
}
static inline double compute(const char *p) {
  const float *x = (const float *)p;
  double acc = 0;
  for (int i = 0; i < TILE / 4; i++) {
    float v = x[i], a = v;
    for (int k = 0; k < C; k++) a = a * 0.999f + v;
    acc += a;
  }
  return acc;
}

static void *helper_main(void *p) {
  helper_t *h = p; group_t *g = h->g; pin(h->core);
  int chunk = (ROWS + H - 1) / H, lo = h->hid * chunk, hi = lo + chunk > ROWS ? ROWS : lo + chunk;
  long served = -1; volatile char sink;
  char *own = aligned_alloc(64, TILE);
  memset(own, 0, TILE);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    long t = atomic_load_explicit(&g->want, memory_order_acquire);
    if (t <= served || t >= TILES) { _mm_pause(); continue; }
    if (MODE == 2) copy_rows(g, t, g->local[t & 1], lo, hi, 1);
    else if (MODE == 4) copy_rows(g, t, g->local[t & 1], lo, hi, 2);
    else if (MODE == 5) copy_rows(g, t, own, lo, hi, 1);
    else touch_rows(g, t, lo, hi, &sink);
    atomic_fetch_add_explicit(&g->done[t & 1], 1, memory_order_release);
    served = t;
  }
  return NULL;
}

static void *group_main(void *p) {
  group_t *g = p; pin(g->core);
  double s = 0;
  if (MODE >= 2) {
    atomic_store(&g->want, 0);
    for (long t = 0; t < TILES; t++) {
      while (atomic_load_explicit(&g->done[t & 1], memory_order_acquire) < H) _mm_pause();
      atomic_store_explicit(&g->done[t & 1], 0, memory_order_relaxed);
      atomic_store_explicit(&g->want, t + 1, memory_order_release);
      if (MODE == 3) copy_rows(g, t, g->local[t & 1], 0, ROWS, 1);
      s += compute(g->local[t & 1]);
    }
  } else {
    for (long t = 0; t < TILES; t++) {
      copy_rows(g, t, g->local[t & 1], 0, ROWS, MODE == 1);
      s += compute(g->local[t & 1]);
    }
  }
  g->sum = s;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 9) { fprintf(stderr, "usage: G H C ROW PITCH TILE TILES MODE\n"); return 2; }
  G = atoi(argv[1]); H = atoi(argv[2]); C = atoi(argv[3]); ROW = atoi(argv[4]);
  PITCH = atoi(argv[5]); TILE = atoi(argv[6]); TILES = atoi(argv[7]); MODE = atoi(argv[8]);
  if (MODE < 2) H = 0;
  ROWS = TILE / ROW;
  PER = (size_t)TILES * ROWS * PITCH;
  src = aligned_alloc(4096, PER * G);
  memset(src, 0x3f, PER * G); /* floats near 0.75 */
  group_t *gs = calloc(G, sizeof *gs);
  helper_t *hs = calloc((size_t)G * (H ? H : 1), sizeof *hs);
  pthread_t *th = calloc((size_t)G * (H + 1), sizeof *th);
  int core = 0, nt = 0;
  for (int i = 0; i < G; i++) {
    gs[i].core = core++; gs[i].base = src + PER * i;
    gs[i].local[0] = aligned_alloc(64, TILE); gs[i].local[1] = aligned_alloc(64, TILE);
    memset(gs[i].local[0], 0, TILE); memset(gs[i].local[1], 0, TILE);
    atomic_store(&gs[i].want, -1);
  }
  for (int i = 0; i < G; i++)
    for (int j = 0; j < H; j++) {
      helper_t *h = &hs[i * H + j]; h->g = &gs[i]; h->hid = j; h->core = core++;
      pthread_create(&th[nt++], NULL, helper_main, h);
    }
  double t0 = now();
  int first = nt;
  for (int i = 0; i < G; i++) pthread_create(&th[nt++], NULL, group_main, &gs[i]);
  for (int i = first; i < nt; i++) pthread_join(th[i], NULL);
  double t1 = now();
  atomic_store(&stop, 1);
  for (int i = 0; i < first; i++) pthread_join(th[i], NULL);
  double chk = 0;
  for (int i = 0; i < G; i++) chk += gs[i].sum;
  printf("G=%d H=%d C=%d row=%d pitch=%d tile=%d mode=%d ns_per_tile=%.0f chk=%.3e\n", G, H, C, ROW, PITCH, TILE,
         MODE, (t1 - t0) * 1e9 / TILES, chk);
  return 0;
}
