/* What one core gives half-precision FMA chains, against float's (DESIGN.md, "Half"):
 * twelve independent chains of a = a * b + c per form, bound by the ports, not by
 * latency. OpenCL half arithmetic rounds every result to half, so a CPU without half
 * instructions pays a float->half->float round trip (F16C) around each float FMA; one
 * with AVX512-FP16 computes in half, twice float's lanes per register.
 *
 * Build: clang -O2 -march=native tools/half-ceiling.c -o half-ceiling
 *        (-march=sapphirerapids -static for a host without a compiler)
 * Run:   taskset -c 0 ./half-ceiling */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define N 50000000L
#define K 12

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* K chains of `step` on values of type T, each `lanes` wide. */
#define CHAINS(T, init, step, lanes, label)                                                    \
    {                                                                                          \
        T a[K];                                                                                \
        for (int i = 0; i < K; i++) a[i] = init;                                               \
        double t = now();                                                                      \
        for (long n = 0; n < N; n++) {                                                         \
            _Pragma("clang loop unroll(full)") for (int i = 0; i < K; i++) a[i] = step;        \
        }                                                                                      \
        double dt = now() - t;                                                                 \
        volatile T sink;                                                                       \
        for (int i = 0; i < K; i++) sink = a[i];                                               \
        (void)sink;                                                                            \
        printf("%-36s %7.2f G lane-ops/s\n", label, (double)N * K * lanes / dt / 1e9);         \
    }

int main(void) {
    __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.5f);
    CHAINS(__m256, _mm256_set1_ps(i), _mm256_fmadd_ps(a[i], b, c), 8, "float, ymm FMA")
    CHAINS(__m128i, _mm256_cvtps_ph(_mm256_set1_ps(i), 0),
           _mm256_cvtps_ph(_mm256_fmadd_ps(_mm256_cvtph_ps(a[i]), b, c), 0), 8,
           "half through F16C, ymm FMA")
#ifdef __AVX512F__
    __m512 bz = _mm512_set1_ps(0.999f), cz = _mm512_set1_ps(0.5f);
    CHAINS(__m512, _mm512_set1_ps(i), _mm512_fmadd_ps(a[i], bz, cz), 16, "float, zmm FMA")
    CHAINS(__m256i, _mm512_cvtps_ph(_mm512_set1_ps(i), 0),
           _mm512_cvtps_ph(_mm512_fmadd_ps(_mm512_cvtph_ps(a[i]), bz, cz), 0), 16,
           "half through F16C, zmm FMA")
#endif
#ifdef __AVX512FP16__
    __m256h bh = _mm256_set1_ph((_Float16)0.999f), ch = _mm256_set1_ph((_Float16)0.5f);
    __m512h bhz = _mm512_set1_ph((_Float16)0.999f), chz = _mm512_set1_ph((_Float16)0.5f);
    CHAINS(__m256h, _mm256_set1_ph((_Float16)i), _mm256_fmadd_ph(a[i], bh, ch), 16, "half, ymm FMA (AVX512-FP16)")
    CHAINS(__m512h, _mm512_set1_ph((_Float16)i), _mm512_fmadd_ph(a[i], bhz, chz), 32, "half, zmm FMA (AVX512-FP16)")
#endif
    return 0;
}
