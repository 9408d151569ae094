// `ndrange_t`'s constructors (OpenCL C 2.0, device-side enqueue): a group size of 0
// leaves the work-group size to the driver, as `clEnqueueNDRangeKernel` with NULL.

#define OVERLOAD __attribute__((overloadable))

static ndrange_t make(uint dims) {
    ndrange_t r;
    r.workDimension = dims;
    for (int d = 0; d < 3; d++) {
        r.globalWorkOffset[d] = 0;
        r.globalWorkSize[d] = 1;
        r.localWorkSize[d] = 0;
    }
    return r;
}

ndrange_t OVERLOAD ndrange_1D(size_t size) {
    ndrange_t r = make(1);
    r.globalWorkSize[0] = size;
    return r;
}
ndrange_t OVERLOAD ndrange_1D(size_t size, size_t group) {
    ndrange_t r = ndrange_1D(size);
    r.localWorkSize[0] = group;
    return r;
}
ndrange_t OVERLOAD ndrange_1D(size_t start, size_t size, size_t group) {
    ndrange_t r = ndrange_1D(size, group);
    r.globalWorkOffset[0] = start;
    return r;
}

// 2D and 3D: the arrays each form takes, in order (start, size, group).
#define NDRANGE(N)                                                                                  \
    ndrange_t OVERLOAD ndrange_##N##D(const size_t size[N]) {                                     \
        ndrange_t r = make(N);                                                                      \
        for (int d = 0; d < N; d++)                                                                 \
            r.globalWorkSize[d] = size[d];                                                        \
        return r;                                                                                   \
    }                                                                                               \
    ndrange_t OVERLOAD ndrange_##N##D(const size_t size[N], const size_t group[N]) {              \
        ndrange_t r = ndrange_##N##D(size);                                                       \
        for (int d = 0; d < N; d++)                                                                 \
            r.localWorkSize[d] = group[d];                                                          \
        return r;                                                                                   \
    }                                                                                               \
    ndrange_t OVERLOAD ndrange_##N##D(const size_t start[N], const size_t size[N], const size_t group[N]) { \
        ndrange_t r = ndrange_##N##D(size, group);                                                \
        for (int d = 0; d < N; d++)                                                                 \
            r.globalWorkOffset[d] = start[d];                                                      \
        return r;                                                                                   \
    }
NDRANGE(2)
NDRANGE(3)
