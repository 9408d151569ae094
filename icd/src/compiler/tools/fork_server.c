/* A fork server for clang, loaded into it with LD_PRELOAD (the technique of AFL's
 * fork server).
 *
 * Most of a clang run's fixed cost is start-up: mapping libLLVM and libclang-cpp,
 * relocating them and running their static constructors (~25 ms of a 35 ms front end).
 * This library wraps __libc_start_main: once those constructors have run, and only
 * when FERROCL_CLANG_SERVE is set, it does not call clang's main but serves requests
 * from the driver, each one run by calling main in a forked child, which inherits the
 * initialised process (~3 ms instead of ~25).
 *
 * Protocol (native byte order), requests on fd 3, answers on fd 4:
 *   request: u32 length, then NUL-terminated words: working directory, argv[0..]
 *   answer:  i32 pid of the child (-1: fork failed), as soon as it runs, then
 *            i32 wait status, u32 length, the child's stdout and stderr together.
 * EOF on fd 3 (the driver's process ended) ends the server. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static main_fn clang_main;

static int read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Runs one request; returns -1 when the driver is gone. */
static int serve_one(int in, int out) {
    uint32_t len;
    if (read_all(in, &len, 4) || len > (64u << 20)) return -1;
    char *buf = malloc((size_t)len + 1);
    if (!buf || read_all(in, buf, len)) return -1;
    buf[len] = 0;
    size_t n = 0;
    for (char *p = buf; p < buf + len; p += strlen(p) + 1) n++;
    char **words = calloc(n + 1, sizeof *words);
    if (!words || n < 2) return -1;
    n = 0;
    for (char *p = buf; p < buf + len; p += strlen(p) + 1) words[n++] = p;

    int pipe_fds[2];
    int32_t pid = -1;
    int piped = pipe2(pipe_fds, O_CLOEXEC) == 0;
    if (piped) {
        pid = fork();
        if (pid == 0) {
            close(in);
            close(out);
            dup2(pipe_fds[1], 1);
            dup2(pipe_fds[1], 2);
            if (chdir(words[0]) != 0) _exit(127);
            int rc = clang_main((int)n - 1, words + 1, environ);
            /* clang has closed its output files by now; skipping LLVM's static
               destructors saves ~5 ms a run. */
            fflush(NULL);
            _exit(rc);
        }
        close(pipe_fds[1]);
    }
    if (write_all(out, &pid, 4)) return -1;
    char *text = NULL;
    size_t size = 0, cap = 0;
    if (pid > 0) {
        for (;;) {
            if (size == cap) {
                cap = cap ? 2 * cap : 4096;
                char *grown = realloc(text, cap);
                if (!grown) break;
                text = grown;
            }
            ssize_t r = read(pipe_fds[0], text + size, cap - size);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            size += (size_t)r;
        }
    }
    if (piped) close(pipe_fds[0]);
    int status = -1;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    int32_t status32 = status;
    uint32_t size32 = (uint32_t)size;
    int failed = write_all(out, &status32, 4) || write_all(out, &size32, 4) || write_all(out, text, size);
    free(text);
    free(words);
    free(buf);
    return failed ? -1 : 0;
}

static int serve(int argc, char **argv, char **envp) {
    if (!getenv("FERROCL_CLANG_SERVE")) return clang_main(argc, argv, envp);
    /* What clang runs in turn (the linker, cc1 when not integrated) must be plain. */
    unsetenv("FERROCL_CLANG_SERVE");
    unsetenv("LD_PRELOAD");
    int in = 3, out = 4;
    fcntl(in, F_SETFD, FD_CLOEXEC);
    fcntl(out, F_SETFD, FD_CLOEXEC);
    while (serve_one(in, out) == 0) {
    }
    _exit(0);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    clang_main = main;
    return real(serve, argc, argv, init, fini, rtld_fini, stack_end);
}
