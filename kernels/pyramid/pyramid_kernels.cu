/* SPDX-License-Identifier: BSD-3-Clause */
/* Device side of the pyramid solver: the heat / Jacobi step kernels (1D, 2D,
 * 3D; float, double) and the long-vector boundary restore.  Every operation
 * is an explicitly rounded intrinsic (__dadd_rn, __dmul_rn, ...) so nvcc
 * cannot contract a*b+c into an FMA: the kernels evaluate exactly the
 * expression of the CPU reference (src/pyramid/pyramid_cpu.c), bit for bit. */
#include "pyramid_kern.h"

/* rn<T>: T's correctly rounded operations, one specialization per type. */
template <typename T> struct rn;
#define PYR_RN(T, ADD, SUB, MUL, DIV, ABS)                                                           \
    template <> struct rn<T> {                                                                   \
        static __device__ __forceinline__ T add(T a, T b) { return ADD(a, b); }                  \
        static __device__ __forceinline__ T sub(T a, T b) { return SUB(a, b); }                  \
        static __device__ __forceinline__ T mul(T a, T b) { return MUL(a, b); }                  \
        static __device__ __forceinline__ T div(T a, T b) { return DIV(a, b); }                  \
        static __device__ __forceinline__ T abs(T a) { return ABS(a); }                          \
    };
PYR_RN(double, __dadd_rn, __dsub_rn, __dmul_rn, __ddiv_rn, fabs)
PYR_RN(float, __fadd_rn, __fsub_rn, __fmul_rn, __fdiv_rn, fabsf)
#undef PYR_RN

/* dst = step(src) over the region lo + [0, e) of a box with strides (1, sy, sz).
 * JAC: Jacobi with rhs g, and (diff != NULL) max |dst - src| folded into *diff
 * as the bit pattern of a non-negative double (ordered like the integers). */
template <typename T, int DIM, int JAC>
__global__ void __launch_bounds__(256) pyr_step_kernel(T *__restrict__ dst, const T *__restrict__ src,
                                                       const T *__restrict__ g, pyr_kregion R, T r,
                                                       unsigned long long *diff)
{
    typedef rn<T> o;
    const int64_t i = R.lo[0] + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t j = R.lo[1] + (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const bool in = i < R.lo[0] + R.e[0] && j < R.lo[1] + R.e[1];
    const T c2d = (T)(2 * DIM);
    double md = 0;
    for (int64_t k = R.lo[2] + blockIdx.z; k < R.lo[2] + R.e[2]; k += gridDim.z) {
        if (!in) continue;
        const int64_t p = i + R.sy * j + R.sz * k;
        const T c = src[p];
        T s = o::add(src[p - 1], src[p + 1]);
        if (DIM > 1) s = o::add(s, o::add(src[p - R.sy], src[p + R.sy]));
        if (DIM > 2) s = o::add(s, o::add(src[p - R.sz], src[p + R.sz]));
        T v = JAC ? o::div(o::add(s, g[p]), c2d) : o::add(c, o::mul(r, o::sub(s, o::mul(c2d, c))));
        dst[p] = v;
        if (JAC) {
            double d = (double)o::abs(o::sub(v, c));
            if (!(d <= md)) md = d;
        }
    }
    if (JAC && diff) {
        for (int off = 16; off; off >>= 1) {
            double x = __shfl_down_sync(0xffffffffu, md, off);
            if (!(x <= md)) md = x;
        }
        if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0 && md != 0)
            atomicMax(diff, (unsigned long long)__double_as_longlong(md));
    }
}

template <typename T, int DIM, int JAC>
static void launch(void *dst, const void *src, const void *g, const pyr_kregion *R, double r,
                   unsigned long long *diff, cudaStream_t st)
{
    dim3 b = DIM == 1 ? dim3(256, 1, 1) : dim3(32, 8, 1);
    dim3 gr((unsigned)((R->e[0] + b.x - 1) / b.x), (unsigned)((R->e[1] + b.y - 1) / b.y),
            (unsigned)(R->e[2] < 65535 ? R->e[2] : 65535));
    pyr_step_kernel<T, DIM, JAC><<<gr, b, 0, st>>>((T *)dst, (const T *)src, (const T *)g, *R, (T)r, diff);
}

cudaError_t pyr_launch_step(int dbl, int dim, int jac, void *dst, const void *src, const void *g,
                            const pyr_kregion *R, double r, unsigned long long *diff, cudaStream_t st)
{
    if (R->e[0] <= 0 || R->e[1] <= 0 || R->e[2] <= 0) return cudaSuccess;
#define PYR_CASE(T, D, J) launch<T, D, J>(dst, src, g, R, r, diff, st)
    if (dbl) {
        if (jac) { if (dim == 1) PYR_CASE(double, 1, 1); else if (dim == 2) PYR_CASE(double, 2, 1); else PYR_CASE(double, 3, 1); }
        else     { if (dim == 1) PYR_CASE(double, 1, 0); else if (dim == 2) PYR_CASE(double, 2, 0); else PYR_CASE(double, 3, 0); }
    } else {
        if (jac) { if (dim == 1) PYR_CASE(float, 1, 1); else if (dim == 2) PYR_CASE(float, 2, 1); else PYR_CASE(float, 3, 1); }
        else     { if (dim == 1) PYR_CASE(float, 1, 0); else if (dim == 2) PYR_CASE(float, 2, 0); else PYR_CASE(float, 3, 0); }
    }
#undef PYR_CASE
    return cudaGetLastError();
}

/* v = u on the outer layer of an N x N grid (the long-vector variant's
 * Dirichlet restore after the shifted axpys). */
__global__ void pyr_lv_restore(double *v, const double *u, int64_t N)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= N) return;
    const int64_t m = N * N;
    v[k] = u[k];
    v[m - N + k] = u[m - N + k];
    v[k * N] = u[k * N];
    v[k * N + N - 1] = u[k * N + N - 1];
}

cudaError_t pyr_launch_lv_restore(double *v, const double *u, int64_t N, cudaStream_t st)
{
    pyr_lv_restore<<<(unsigned)((N + 255) / 256), 256, 0, st>>>(v, u, N);
    return cudaGetLastError();
}
