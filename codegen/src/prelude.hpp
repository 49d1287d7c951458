// WSP CPU-sim prelude: element conversions, tile loads and stores, blocked matmul.
// f16 and bf16 are stored in 16 bits and computed in f32.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace wsp {

static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-8f;  // subnormal: mant * 2^-24
        return sign ? -f : f;
    }
    uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                           : (sign | ((exp + 112) << 23) | (mant << 13));
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

// Round to nearest, ties to even, as NumPy's astype(float16).
static inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mant = x & 0x7fffffu;
    int32_t exp = (int32_t)((x >> 23) & 0xffu);
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;  // a carry rounds up the exponent
    return (uint16_t)half;
}

static inline float bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

// How a dtype is stored (S) and computed (C).
struct F16 {
    using S = uint16_t;
    using C = float;
    static C in(S s) { return f16_to_f32(s); }
    static S out(C c) { return f32_to_f16(c); }
    static C round(C c) { return f16_to_f32(f32_to_f16(c)); }
};
struct BF16 {
    using S = uint16_t;
    using C = float;
    static C in(S s) { return bf16_to_f32(s); }
    static S out(C c) { return f32_to_bf16(c); }
    static C round(C c) { return bf16_to_f32(f32_to_bf16(c)); }
};
template <class T>
struct Plain {
    using S = T;
    using C = T;
    static C in(S s) { return s; }
    static S out(C c) { return c; }
    static C round(C c) { return c; }
};

template <class T>
static inline T lowest() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
}

template <int M, int N, class D>
static inline void load(typename D::C* dst, const typename D::S* src, int64_t rs, int64_t cs) {
    if (cs == 1) {
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) dst[i * N + j] = D::in(src[i * rs + j]);
    } else {
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) dst[i * N + j] = D::in(src[i * rs + j * cs]);
    }
}

template <int M, int N, class D>
static inline void store(typename D::S* dst, int64_t rs, int64_t cs, const typename D::C* src) {
    if (cs == 1) {
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) dst[i * rs + j] = D::out(src[i * N + j]);
    } else {
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) dst[i * rs + j * cs] = D::out(src[i * N + j]);
    }
}

// One block of c = a @ b (+ acc): BM rows by BN columns at (i0, j0), held in registers
// across the whole K loop. Each element sums over k in order from acc (or 0), whatever the
// blocking, so the result does not depend on it.
template <int BM, int BN, int N, int K, class T>
static inline void matmul_block(const T* a, const T* b, const T* acc, T* c, int i0, int j0) {
    T r[BM][BN];
    for (int i = 0; i < BM; ++i)
        for (int j = 0; j < BN; ++j) r[i][j] = acc ? acc[(i0 + i) * N + j0 + j] : T(0);
    for (int k = 0; k < K; ++k) {
        const T* brow = b + k * N + j0;
        for (int i = 0; i < BM; ++i) {
            const T av = a[(i0 + i) * K + k];
            for (int j = 0; j < BN; ++j) r[i][j] += av * brow[j];
        }
    }
    for (int i = 0; i < BM; ++i)
        for (int j = 0; j < BN; ++j) c[(i0 + i) * N + j0 + j] = r[i][j];
}

template <int R, int BN, int N, int K, class T>
static inline void matmul_rows(const T* a, const T* b, const T* acc, T* c, int i0) {
    constexpr int Nb = N / BN * BN;
    for (int j0 = 0; j0 < Nb; j0 += BN) matmul_block<R, BN, N, K>(a, b, acc, c, i0, j0);
    if constexpr (N % BN != 0) matmul_block<R, N % BN, N, K>(a, b, acc, c, i0, Nb);
}

// c = a @ b (+ acc): [M,K] x [K,N], in blocks of 6 rows by two vectors of columns (12
// accumulator registers), the last rows and columns in one smaller block each. Measured by
// `cargo xtask bench runtime`.
template <class T, int M, int N, int K>
static inline void matmul(const T* a, const T* b, const T* acc, T* c) {
#ifdef __AVX512F__
    constexpr int BN = 32;
#else
    constexpr int BN = 16;
#endif
    constexpr int BM = 6;
    constexpr int Mb = M / BM * BM;
    for (int i0 = 0; i0 < Mb; i0 += BM) matmul_rows<BM, BN, N, K>(a, b, acc, c, i0);
    if constexpr (M % BM != 0) matmul_rows<M % BM, BN, N, K>(a, b, acc, c, Mb);
}

}  // namespace wsp

// The cycle hook of custom kernels, as in the original's CPU simulation: a `cpp_src` body calls
// `pto::cpu_sim::add_cycles(n)` to cost `n` more cycles on the simulated clock (on top of moving
// its tiles). The count is per thread and the runtime reads it back after each custom task, so
// tasks running at once on different workers never share it.
namespace wsp {
inline thread_local uint64_t extra_cycles = 0;
}  // namespace wsp

namespace pto::cpu_sim {
inline void add_cycles(uint64_t n) { wsp::extra_cycles += n; }
}  // namespace pto::cpu_sim

// Weak: translation units that include the prelude (the NPU tree's host replays) link together.
extern "C" __attribute__((weak)) uint64_t wsp_take_cycles() {
    uint64_t n = wsp::extra_cycles;
    wsp::extra_cycles = 0;
    return n;
}
