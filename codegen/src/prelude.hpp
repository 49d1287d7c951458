// WSP CPU-sim prelude: element conversions, tile loads and stores, blocked matmul.
// f16 and bf16 are stored in 16 bits and computed in f32.
// Nothing but <stdint.h> is included: the standard library's <cmath> and <algorithm> took
// g++ longer to read than a kernel takes to compile. Programs with `cpp_src` bodies get those
// headers before the prelude (`cpp::PRELUDE_WITH_STD`).
#include <stdint.h>

namespace wsp {

template <class To, class From>
static inline To bits(From f) {
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    __builtin_memcpy(&t, &f, sizeof t);
    return t;
}

// The conversions are branch-free (selects, not jumps) so that loops over tiles vectorize
// (after F. Giesen's half_to_float / float_to_half_fast3_rtne).
static inline float f16_to_f32(uint16_t h) {
    const uint32_t exp_mask = 0x7c00u << 13;
    uint32_t o = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t exp = o & exp_mask;
    o += (127 - 15) << 23;
    // Infinity and NaN keep an all-ones exponent.
    uint32_t special = o + ((128 - 16) << 23);
    // Subnormal: renormalised by a float subtraction of 2^-14.
    uint32_t sub = bits<uint32_t>(bits<float>(o + (1u << 23)) - bits<float>(113u << 23));
    o = exp == exp_mask ? special : (exp == 0 ? sub : o);
    return bits<float>(o | ((uint32_t)(h & 0x8000u) << 16));
}

// Round to nearest, ties to even, as NumPy's astype(float16); NaN stays a (quiet) NaN.
static inline uint16_t f32_to_f16(float ff) {
    uint32_t f = bits<uint32_t>(ff);
    const uint32_t sign = f & 0x80000000u;
    f ^= sign;
    // Past the largest half: infinity, or a quiet NaN.
    uint32_t big = f > (255u << 23) ? 0x7e00u : 0x7c00u;
    // Below the smallest normal half: the float addition of 0.5 rounds the subnormal.
    uint32_t small = bits<uint32_t>(bits<float>(f) + 0.5f) - 0x3f000000u;
    // Normal: rebias and round the 13 dropped bits to even.
    uint32_t normal = (f + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((f >> 13) & 1u)) >> 13;
    uint32_t o = f >= (143u << 23) ? big : (f < (113u << 23) ? small : normal);
    return (uint16_t)(o | (sign >> 16));
}

static inline float bf16_to_f32(uint16_t h) { return bits<float>((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x = bits<uint32_t>(f);
    uint32_t nan = (x >> 16) | 0x40u;
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// Elementwise math in f32, branch-free so that a loop over a tile vectorizes (libm's expf is a
// call per element). The CPU-sim kernels call the op table's `std::` functions here, in `wsp::`
// (codegen's `vector_math`). Cephes' minimax polynomials: exp and log within 1 ulp of the
// correctly rounded result, tanh within 2 (all its floats tried), over the whole range, with
// IEEE behaviour at infinities, NaN and subnormals. f64 (and integer) values use the standard
// library.
// e^r - 1 for x = n ln2 + r, |r| <= ln2 / 2, and n: e^x is (that + 1) times 2^n. x is finite
// and its n within the exponent's range.
static inline float expm1_reduced(float x, float& n) {
    // Rounding by adding 1.5 * 2^23.
    n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    // Estrin's scheme rather than Horner's: the same polynomial with half the dependent steps.
    // A vectorized loop over a tile is bound by its longest chain, not by its count of
    // instructions, when the vectors are narrow (AVX2).
    float r2 = r * r;
    float p01 = 1.3981999507e-3f + 1.9875691500e-4f * r;
    float p23 = 4.1665795894e-2f + 8.3334519073e-3f * r;
    float p45 = 5.0000001201e-1f + 1.6666665459e-1f * r;
    float p = p45 + r2 * (p23 + r2 * p01);
    return p * r2 + r;
}

// exp's clamp bounds as bits, and tanh's. Not constants, so that the compiler cannot see the
// clamped result as a constant and compute exp of the unclamped value instead (g++'s jump
// threading does), whose garbage exponents make slow underflows.
inline __attribute__((visibility("hidden"))) int32_t exp_clamp[3] = {
    0x42d20000 /* 105 */, (int32_t)0xc2d10000u /* -104.5 */, 0x41a00000 /* 20 */};

static inline float exp(float x) {
    // Past these the result is infinity or zero. Bits compare as integers (one instruction
    // each, where a float select takes two): signed they order the positive floats, unsigned
    // the negative ones. NaN is put back at the end.
    int32_t s = bits<int32_t>(x);
    s = s < exp_clamp[0] ? s : exp_clamp[0];
    uint32_t u = (uint32_t)s < (uint32_t)exp_clamp[1] ? (uint32_t)s : (uint32_t)exp_clamp[1];
    float n;
    float p = expm1_reduced(bits<float>(u), n) + 1.0f;
    // 2^n in two factors, 2^+-24 and the rest, so that results in the subnormals round once.
    // At the clamp's ends the rest is exactly infinity (n = 151) or 0 (n = -151): no multiply
    // overflows or underflows to 0, which would take a slow microcode assist.
    int32_t ni = (int32_t)n;
    int32_t m = (ni >> 31) & -48;
    float s1 = bits<float>((uint32_t)(m + 24 + 127) << 23);
    float s2 = bits<float>((uint32_t)(ni - m - 24 + 127) << 23);
    float y = p * s1 * s2;
    return x != x ? x : y;
}

static inline float log(float x) {
    // Subnormals are scaled into the normals first.
    float xs = x < 1.17549435e-38f ? x * 8388608.0f : x;
    int32_t scaled = x < 1.17549435e-38f ? 23 : 0;
    // x = (1 + m) 2^e with 1 + m in [sqrt(1/2), sqrt(2)), in integer steps (as musl's logf):
    // the exponent field offset so that it ticks over at sqrt(1/2) rather than at 1.
    uint32_t u = bits<uint32_t>(xs) + (0x3f800000u - 0x3f3504f3u);
    int32_t e = (int32_t)(u >> 23) - 0x7f - scaled;
    float m = bits<float>((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float z = m * m;
    // Estrin's scheme, as in expm1_reduced.
    float z2 = z * z;
    float q87 = 3.3333331174e-1f - 2.4999993993e-1f * m;
    float q65 = 2.0000714765e-1f - 1.6668057665e-1f * m;
    float q43 = 1.4249322787e-1f - 1.2420140846e-1f * m;
    float q21 = 1.1676998740e-1f - 1.1514610310e-1f * m;
    float p = (q87 + z * q65) + z2 * ((q43 + z * q21) + z2 * 7.0376836292e-2f);
    float fe = (float)e;
    float y = m * z * p + fe * -2.12194440e-4f - 0.5f * z;
    y = m + y + fe * 0.693359375f;
    // Outside (0, inf): -inf at zero, NaN below it, and infinity and NaN themselves, in one
    // select at the end rather than a chain of them.
    const float inf = __builtin_inff();
    float special = x == 0.0f ? -inf : (x < 0.0f ? __builtin_nanf("") : x);
    return x > 0.0f && x < inf ? y : special;
}

static inline float tanh(float x) {
    // (e^2|x| - 1) / (e^2|x| + 1), with e^2|x| - 1 from exp's reduction as 2^n (e^r - 1) +
    // (2^n - 1): no cancellation near 0, and one path for every x. Past |x| = 10 the quotient
    // rounds to 1, so 2|x| is clamped to 20. A NaN is put back at the end.
    float a = bits<float>(bits<uint32_t>(x) & 0x7fffffffu);
    int32_t a2 = bits<int32_t>(a + a);
    a2 = a2 < exp_clamp[2] ? a2 : exp_clamp[2];
    float n;
    float em1r = expm1_reduced(bits<float>(a2), n);
    float s = bits<float>((uint32_t)((int32_t)n + 127) << 23);
    float em1 = s * em1r + (s - 1.0f);
    float y = em1 / (em1 + 2.0f);
    y = bits<float>(bits<uint32_t>(y) | (bits<uint32_t>(x) & 0x80000000u));
    return x != x ? x : y;
}

// The rest of the table's `std::` functions, as the standard library's overloads have them:
// f32 and f64 (the compiler's own, which vectorize or are not in a kernel's hot path), and
// integers computed in f64.
static inline double exp(double x) { return __builtin_exp(x); }
static inline double log(double x) { return __builtin_log(x); }
static inline double tanh(double x) { return __builtin_tanh(x); }
static inline float sqrt(float x) { return __builtin_sqrtf(x); }
static inline double sqrt(double x) { return __builtin_sqrt(x); }
static inline float sin(float x) { return __builtin_sinf(x); }
static inline double sin(double x) { return __builtin_sin(x); }
static inline float cos(float x) { return __builtin_cosf(x); }
static inline double cos(double x) { return __builtin_cos(x); }
template <class T>
static inline double exp(T x) { return __builtin_exp((double)x); }
template <class T>
static inline double log(T x) { return __builtin_log((double)x); }
template <class T>
static inline double tanh(T x) { return __builtin_tanh((double)x); }
template <class T>
static inline double sqrt(T x) { return __builtin_sqrt((double)x); }
template <class T>
static inline double sin(T x) { return __builtin_sin((double)x); }
template <class T>
static inline double cos(T x) { return __builtin_cos((double)x); }
// Integers narrower than int are promoted to it, as `std::abs` does.
static inline int abs(int x) { return __builtin_abs(x); }
static inline long abs(long x) { return __builtin_labs(x); }
static inline long long abs(long long x) { return __builtin_llabs(x); }
static inline float abs(float x) { return __builtin_fabsf(x); }
static inline double abs(double x) { return __builtin_fabs(x); }

template <class T>
static inline T min(T a, T b) { return b < a ? b : a; }
template <class T>
static inline T max(T a, T b) { return a < b ? b : a; }

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

// -infinity for floating types, the least value for integers.
template <class T>
static inline T lowest() {
    if (T(0.5) != T(0)) {
        return T(-__builtin_inf());
    }
    return T(-1) > T(0) ? T(0) : T((unsigned long long)1 << (sizeof(T) * 8 - 1));
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

// A slice of an M x N tile whose first `vr` rows and `vc` columns lie inside its tensor (PTO-ISA's
// valid shape): the rest of the tile is `pad` when loaded, and is not written when stored.
template <int M, int N, class D>
static inline void load_part(typename D::C* dst, const typename D::S* src, int64_t rs, int64_t cs,
                             int64_t vr, int64_t vc, typename D::C pad) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            dst[i * N + j] = i < vr && j < vc ? D::in(src[i * rs + j * cs]) : pad;
}

template <int M, int N, class D>
static inline void store_part(typename D::S* dst, int64_t rs, int64_t cs, const typename D::C* src,
                              int64_t vr, int64_t vc) {
    for (int64_t i = 0; i < vr && i < M; ++i)
        for (int64_t j = 0; j < vc && j < N; ++j) dst[i * rs + j * cs] = D::out(src[i * N + j]);
}

// A row of N reduced by `combine` in 16 interleaved lanes, then the lanes pairwise: one
// accumulator is a chain no compiler may vectorize, lanes are a vector each. The order is
// fixed, so results do not depend on the machine's vectors or on the worker count (and sums
// come closer to NumPy's pairwise ones).
template <int N, class T, class F>
static inline T reduce_row(const T* x, T init, F combine) {
    constexpr int L = 16;
    if constexpr (N < 2 * L) {
        T acc = init;
        for (int j = 0; j < N; ++j) acc = combine(acc, x[j]);
        return acc;
    } else {
        T lane[L];
        for (int l = 0; l < L; ++l) lane[l] = init;
        constexpr int Nb = N / L * L;
        for (int j = 0; j < Nb; j += L)
            for (int l = 0; l < L; ++l) lane[l] = combine(lane[l], x[j + l]);
        for (int j = Nb; j < N; ++j) lane[j - Nb] = combine(lane[j - Nb], x[j]);
        for (int w = L / 2; w > 0; w /= 2)
            for (int l = 0; l < w; ++l) lane[l] = combine(lane[l], lane[l + w]);
        return lane[0];
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
