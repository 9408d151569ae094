/* printf (OpenCL C 6.15.14): the C conversions plus the vector ones, %vN with a length
 * modifier (hh, h, hl, l): each of the N components prints with the scalar conversion
 * and the same flags, width and precision, separated by commas (%v4hlf prints a float4).
 * The IR rewrite renames kernels' printf calls to __ferrocl_printf. A call's output is
 * assembled first and written to standard output's descriptor with write(2), so the
 * lines of work-items running on different workers do not interleave and all output is
 * out when the kernel completes (the spec's latest point). Not through stdio: a kernel
 * stopped by the watchdog inside fwrite would leave stdout's lock held, and the host's
 * next printf would wait for ever. The driver flushes the host's stdout before a kernel
 * that prints runs, so the host's earlier output comes first.
 * Compiled by the driver to bitcode like workitem.c; only the C library's vsnprintf and
 * write are used, declared here so no C library headers are needed. */

#include <stdarg.h>
#include <stddef.h>

int vsnprintf(char *, size_t, const char *, va_list);
long write(int, const void *, size_t);
int *__errno_location(void);
#define EINTR 4

/* OpenCL C string literals live in the constant address space. */
typedef __attribute__((address_space(2))) const char cl_char_t;

#define VEC_TYPES(T, NAME) \
    typedef T NAME##2 __attribute__((ext_vector_type(2))); \
    typedef T NAME##3 __attribute__((ext_vector_type(3))); \
    typedef T NAME##4 __attribute__((ext_vector_type(4))); \
    typedef T NAME##8 __attribute__((ext_vector_type(8))); \
    typedef T NAME##16 __attribute__((ext_vector_type(16)));
VEC_TYPES(signed char, c)
VEC_TYPES(short, s)
VEC_TYPES(int, i)
VEC_TYPES(long, l)
VEC_TYPES(_Float16, h)
VEC_TYPES(float, f)
VEC_TYPES(double, d)

/* Room for one call's output; longer output is cut (the spec leaves the buffer size to the
 * implementation: CL_DEVICE_PRINTF_BUFFER_SIZE is per kernel, far larger). */
#define OUT 4096

typedef struct {
    char buf[OUT];
    size_t len;
} out_t;

static void put(out_t *o, const char *spec, ...) {
    va_list ap;
    va_start(ap, spec);
    int n = vsnprintf(o->buf + o->len, OUT - o->len, spec, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n < OUT - o->len ? (size_t)n : OUT - 1 - o->len;
}

/* One vector argument of N components of the type the length modifier and conversion
 * give; `spec` is the scalar conversion to print each component with. */
#define FETCH(N, TYPE, CAST) \
    case N: { \
        TYPE v = va_arg(*ap, TYPE); \
        for (int i = 0; i < N; i++) { \
            if (i) put(o, ","); \
            put(o, spec, (CAST)v[i]); \
        } \
        return 0; \
    }
#define WIDTHS(NAME, CAST) \
    switch (n) { \
        FETCH(2, NAME##2, CAST) FETCH(3, NAME##3, CAST) FETCH(4, NAME##4, CAST) FETCH(8, NAME##8, CAST) \
        FETCH(16, NAME##16, CAST) \
    } \
    return -1;

static int put_vector(out_t *o, const char *spec, int n, int bits, int floating, va_list *ap) {
    if (floating) {
        if (bits == 16) { WIDTHS(h, double) }
        if (bits == 32) { WIDTHS(f, double) }
        if (bits == 64) { WIDTHS(d, double) }
        return -1;
    }
    if (bits == 8) { WIDTHS(c, int) }
    if (bits == 16) { WIDTHS(s, int) }
    if (bits == 32) { WIDTHS(i, int) }
    if (bits == 64) { WIDTHS(l, long) }
    return -1;
}

/* Writes a call's output to descriptor `fd` whole. */
static void emit(int fd, const out_t *o) {
    for (size_t at = 0; at < o->len;) {
        long n = write(fd, o->buf + at, o->len - at);
        if (n > 0) at += (size_t)n;
        else if (n == 0 || *__errno_location() != EINTR) break;
    }
}

static int is_flag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

int __ferrocl_printf(cl_char_t *format, ...) {
    out_t o;
    o.len = 0;
    va_list ap;
    va_start(ap, format);
    const cl_char_t *f = format;
    int status = 0;
    while (*f && status == 0) {
        if (*f != '%') {
            if (o.len < OUT - 1) o.buf[o.len++] = *f;
            f++;
            continue;
        }
        if (f[1] == '%') {
            if (o.len < OUT - 1) o.buf[o.len++] = '%';
            f += 2;
            continue;
        }
        /* spec: '%', flags, width, precision, then the C length for one component. */
        char spec[64];
        size_t k = 0;
        spec[k++] = *f++;
        while (is_flag(*f) && k < 40) spec[k++] = *f++;
        while (is_digit(*f) && k < 40) spec[k++] = *f++;
        if (*f == '.') {
            spec[k++] = *f++;
            while (is_digit(*f) && k < 40) spec[k++] = *f++;
        }
        int n = 0;
        if (*f == 'v') {
            f++;
            while (is_digit(*f)) n = n * 10 + (*f++ - '0');
        }
        int bits = 0; /* 0: no length modifier */
        if (f[0] == 'h' && f[1] == 'h') bits = 8, f += 2;
        else if (f[0] == 'h' && f[1] == 'l') bits = 32, f += 2;
        else if (f[0] == 'h') bits = 16, f += 1;
        else if (f[0] == 'l') bits = 64, f += 1;
        char conv = *f;
        if (!conv) {
            status = -1;
            break;
        }
        f++;
        int floating = conv == 'f' || conv == 'F' || conv == 'e' || conv == 'E' || conv == 'g' || conv == 'G' ||
                       conv == 'a' || conv == 'A';
        int integer = conv == 'd' || conv == 'i' || conv == 'o' || conv == 'u' || conv == 'x' || conv == 'X';
        /* The C length for one component: char and short promote to int, long is C's. */
        if (integer && bits == 8) spec[k++] = 'h', spec[k++] = 'h';
        if (integer && bits == 16) spec[k++] = 'h';
        if (integer && bits == 64) spec[k++] = 'l';
        spec[k++] = conv;
        spec[k] = 0;
        if (n) {
            /* Vectors take a length modifier (6.15.14.2.1); without one, 32-bit
             * components are assumed rather than the call failing. */
            if (!bits) bits = 32;
            if (!(n == 2 || n == 3 || n == 4 || n == 8 || n == 16) || !(floating || integer)) {
                status = -1;
                break;
            }
            status = put_vector(&o, spec, n, bits, floating, &ap);
        } else if (floating) {
            put(&o, spec, va_arg(ap, double));
        } else if (integer || conv == 'c') {
            if (bits == 64) put(&o, spec, va_arg(ap, long));
            else put(&o, spec, va_arg(ap, int));
        } else if (conv == 's') {
            cl_char_t *s = va_arg(ap, cl_char_t *);
            put(&o, spec, (const char *)(unsigned long)s);
        } else if (conv == 'p') {
            put(&o, spec, va_arg(ap, void *));
        } else {
            status = -1;
        }
    }
    va_end(ap);
    emit(1, &o);
    return status;
}

/* cl_intel_devicelib_assert: what a failed `assert` in SYCL device code calls (the SYCL
 * runtime then links no assert library of its own). The message Intel's runtimes write,
 * to standard error, and a trap, which fails the launch like any kernel fault
 * (`CL_OUT_OF_RESOURCES` on its event) and leaves the process running. */
typedef __attribute__((address_space(4))) const char any_char_t;
void __devicelib_assert_fail(any_char_t *expr, any_char_t *file, int line, any_char_t *func, unsigned long gid0,
                             unsigned long gid1, unsigned long gid2, unsigned long lid0, unsigned long lid1,
                             unsigned long lid2) {
    out_t o = {.len = 0};
    const char *name = func ? (const char *)func : "<unknown>";
    put(&o, "%s:%d: %s: global id: [%lu,%lu,%lu], local id: [%lu,%lu,%lu] Assertion `%s` failed.\n",
        file ? (const char *)file : "<unknown>", line, name, gid0, gid1, gid2, lid0, lid1, lid2,
        expr ? (const char *)expr : "<unknown>");
    emit(2, &o);
    __builtin_trap();
}
