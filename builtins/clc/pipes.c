/* OpenCL 2.0 pipes (OpenCL C 6.13.16): the functions clang lowers `read_pipe`,
 * `write_pipe`, the reservations and the queries to, on a ring in the pipe's memory
 * (kernel-abi `PipeHeader`, laid out again below). A pipe argument is a global pointer
 * to the header; reservation ids are the reservation's first position (high 32 bits)
 * and packet count (low 32), never 0 for a valid one. Reservations are made under the
 * header's lock and committed in the order they were made: a commit waits for the
 * earlier reservations' commits (work-items reserve and commit in the same order on a
 * group's thread, and other groups run on threads of their own). The work-group and
 * sub-group forms are rewritten by the driver (icd/src/compiler/passes/collectives.rs)
 * into a leader's `__ferrocl_pipe_reserve` whose id a reduction gives every work-item,
 * and a barrier before the leader's `__ferrocl_pipe_commit`. */

#define GLOBAL __attribute__((address_space(1)))
#define GENERIC __attribute__((address_space(4)))

struct pipe {
    unsigned packet_size, max_packets, lock;
    unsigned read_reserved, read_committed, write_reserved, write_committed, pad;
};
_Static_assert(__builtin_offsetof(struct pipe, write_committed) == 24, "PipeHeader layout");
#define PACKETS 128

typedef unsigned long reservation;

static inline struct pipe *header(GLOBAL void *p) { return (struct pipe *)(void *)p; }

/* Positions run modulo twice the ring, so that full and empty differ. */
static inline unsigned advance(const struct pipe *h, unsigned at, unsigned n) {
    unsigned long next = (unsigned long)at + n;
    unsigned long period = 2ul * h->max_packets;
    return (unsigned)(next >= period ? next - period : next);
}
static inline unsigned distance(const struct pipe *h, unsigned from, unsigned to) {
    return to >= from ? to - from : (unsigned)(2ul * h->max_packets - from + to);
}

static void lock(struct pipe *h) {
    while (__atomic_exchange_n(&h->lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&h->lock, __ATOMIC_RELAXED)) __builtin_ia32_pause();
}
static void unlock(struct pipe *h) { __atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE); }

/* `n` packets to read (the readable ones are committed writes not yet reserved by a
 * reader) or to write (free slots: the ring less what is written and not yet read). */
static reservation reserve(struct pipe *h, unsigned n, int reading) {
    reservation id = 0;
    if (n == 0 || n > h->max_packets) return 0;
    lock(h);
    if (reading) {
        unsigned at = h->read_reserved;
        if (distance(h, at, __atomic_load_n(&h->write_committed, __ATOMIC_ACQUIRE)) >= n) {
            h->read_reserved = advance(h, at, n);
            id = (reservation)at << 32 | n;
        }
    } else {
        unsigned at = h->write_reserved;
        unsigned used = distance(h, __atomic_load_n(&h->read_committed, __ATOMIC_ACQUIRE), at);
        if (h->max_packets - used >= n) {
            h->write_reserved = advance(h, at, n);
            id = (reservation)at << 32 | n;
        }
    }
    unlock(h);
    return id;
}

/* Publishes a reservation once every earlier one of its direction is published. */
static void commit(struct pipe *h, reservation id, int reading) {
    unsigned *done = reading ? &h->read_committed : &h->write_committed;
    unsigned at = (unsigned)(id >> 32), n = (unsigned)id;
    while (__atomic_load_n(done, __ATOMIC_ACQUIRE) != at) __builtin_ia32_pause();
    __atomic_store_n(done, advance(h, at, n), __ATOMIC_RELEASE);
}

/* The slot of packet `index` of a reservation. */
static char *slot(struct pipe *h, reservation id, unsigned index) {
    unsigned at = advance(h, (unsigned)(id >> 32), index);
    if (at >= h->max_packets) at -= h->max_packets;
    return (char *)h + PACKETS + (unsigned long)at * h->packet_size;
}

static inline unsigned smaller(unsigned a, unsigned b) { return a < b ? a : b; }

int __read_pipe_2(GLOBAL void *p, GENERIC void *to, unsigned size, unsigned align) {
    (void)align;
    struct pipe *h = header(p);
    reservation id = reserve(h, 1, 1);
    if (!id) return -1;
    __builtin_memcpy((void *)to, slot(h, id, 0), smaller(size, h->packet_size));
    commit(h, id, 1);
    return 0;
}

int __write_pipe_2(GLOBAL void *p, GENERIC const void *from, unsigned size, unsigned align) {
    (void)align;
    struct pipe *h = header(p);
    reservation id = reserve(h, 1, 0);
    if (!id) return -1;
    __builtin_memcpy(slot(h, id, 0), (const void *)from, smaller(size, h->packet_size));
    commit(h, id, 0);
    return 0;
}

int __read_pipe_4(GLOBAL void *p, void *rid, unsigned index, GENERIC void *to, unsigned size, unsigned align) {
    (void)align;
    struct pipe *h = header(p);
    reservation id = (reservation)rid;
    if (!id || index >= (unsigned)id) return -1;
    __builtin_memcpy((void *)to, slot(h, id, index), smaller(size, h->packet_size));
    return 0;
}

int __write_pipe_4(GLOBAL void *p, void *rid, unsigned index, GENERIC const void *from, unsigned size,
                   unsigned align) {
    (void)align;
    struct pipe *h = header(p);
    reservation id = (reservation)rid;
    if (!id || index >= (unsigned)id) return -1;
    __builtin_memcpy(slot(h, id, index), (const void *)from, smaller(size, h->packet_size));
    return 0;
}

void *__reserve_read_pipe(GLOBAL void *p, unsigned n, unsigned size, unsigned align) {
    (void)size, (void)align;
    return (void *)reserve(header(p), n, 1);
}
void *__reserve_write_pipe(GLOBAL void *p, unsigned n, unsigned size, unsigned align) {
    (void)size, (void)align;
    return (void *)reserve(header(p), n, 0);
}
void __commit_read_pipe(GLOBAL void *p, void *rid, unsigned size, unsigned align) {
    (void)size, (void)align;
    if (rid) commit(header(p), (reservation)rid, 1);
}
void __commit_write_pipe(GLOBAL void *p, void *rid, unsigned size, unsigned align) {
    (void)size, (void)align;
    if (rid) commit(header(p), (reservation)rid, 0);
}

/* The work-group and sub-group forms, as the driver rewrites them: the leader reserves
 * (the others get 0, which the reduction adds to the leader's id), and after the
 * group's barrier the leader commits. */
reservation __ferrocl_pipe_reserve(GLOBAL void *p, unsigned n, _Bool leader, int reading) {
    return leader ? reserve(header(p), n, reading) : 0;
}
void __ferrocl_pipe_commit(GLOBAL void *p, void *rid, _Bool leader, int reading) {
    if (leader && rid) commit(header(p), (reservation)rid, reading);
}

/* `get_pipe_num_packets`: packets written and not yet reserved by a reader. */
static unsigned packets(GLOBAL void *p) {
    struct pipe *h = header(p);
    lock(h);
    unsigned n = distance(h, h->read_reserved, __atomic_load_n(&h->write_committed, __ATOMIC_ACQUIRE));
    unlock(h);
    return n;
}
unsigned __get_pipe_num_packets_ro(GLOBAL void *p, unsigned size, unsigned align) {
    (void)size, (void)align;
    return packets(p);
}
unsigned __get_pipe_num_packets_wo(GLOBAL void *p, unsigned size, unsigned align) {
    (void)size, (void)align;
    return packets(p);
}
unsigned __get_pipe_max_packets_ro(GLOBAL void *p, unsigned size, unsigned align) {
    (void)size, (void)align;
    return header(p)->max_packets;
}
unsigned __get_pipe_max_packets_wo(GLOBAL void *p, unsigned size, unsigned align) {
    (void)size, (void)align;
    return header(p)->max_packets;
}

/* OpenCL C's `is_valid_reserve_id`, under clang's mangled name. */
_Bool _Z19is_valid_reserve_id13ocl_reserveid(void *rid) { return rid != 0; }
