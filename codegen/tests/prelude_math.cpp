// Appended to the prelude by `the_prelude_math_is_accurate` (codegen/src/lib.rs): checks the
// vectorizable math against double-precision libm and the f16/bf16 conversions against the
// straightforward scalar definitions. Prints the worst errors; exits 1 on a failure.
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace reference {
// Round to nearest, ties to even, written out case by case.
static uint16_t f32_to_f16(float f) {
    uint32_t x = wsp::bits<uint32_t>(f);
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
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;
    return (uint16_t)half;
}

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                           : (sign | ((exp + 112) << 23) | (mant << 13));
    return wsp::bits<float>(x);
}

static uint16_t f32_to_bf16(float f) {
    uint32_t x = wsp::bits<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}
}  // namespace reference

// Distance in units in the last place between `got` and `want` rounded to float.
static int64_t ulps(float got, double want) {
    float w = (float)want;
    if (got == w || (got != got && w != w)) return 0;
    if (got != got || w != w || std::isinf(got) || std::isinf(w)) return 1 << 30;
    auto ordered = [](float f) {
        int64_t i = wsp::bits<int32_t>(f);
        return i < 0 ? (int64_t)INT32_MIN - i : i;
    };
    return std::llabs(ordered(got) - ordered(w));
}

static bool same(float a, float b) {
    return wsp::bits<uint32_t>(a) == wsp::bits<uint32_t>(b) || (a != a && b != b);
}

// The loops are the kernels' shape, so the compiler vectorizes the math as it does there.
constexpr int BLOCK = 4096;

int main() {
    static float in[BLOCK], out[3][BLOCK];
    int64_t worst[3] = {0, 0, 0};
    float at[3] = {0, 0, 0};
    const char* names[3] = {"exp", "log", "tanh"};
    uint64_t conversions_wrong = 0;
    // Every 257th bit pattern (all exponents, signs, NaNs and subnormals), and then the
    // special values.
    for (uint64_t start = 0; start < (1ull << 32); start += 257ull * BLOCK) {
        int n = 0;
        for (uint64_t u = start; u < (1ull << 32) && n < BLOCK; u += 257) in[n++] = wsp::bits<float>((uint32_t)u);
        for (int i = 0; i < n; ++i) out[0][i] = wsp::exp(in[i]);
        for (int i = 0; i < n; ++i) out[1][i] = wsp::log(in[i]);
        for (int i = 0; i < n; ++i) out[2][i] = wsp::tanh(in[i]);
        for (int i = 0; i < n; ++i) {
            double x = in[i];
            double want[3] = {std::exp(x), std::log(x), std::tanh(x)};
            for (int k = 0; k < 3; ++k) {
                int64_t e = ulps(out[k][i], want[k]);
                if (e > worst[k]) worst[k] = e, at[k] = in[i];
            }
            float f = in[i];
            if (wsp::f32_to_f16(f) != reference::f32_to_f16(f) ||
                wsp::f32_to_bf16(f) != reference::f32_to_bf16(f))
                conversions_wrong++;
        }
    }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.72f, 88.73f, -87.4f, -103.9f, -104.0f, 1e-45f, 0.625f, -0.625f, 44.5f, -44.5f};
    for (float x : specials) {
        double want[3] = {std::exp((double)x), std::log((double)x), std::tanh((double)x)};
        float got[3] = {wsp::exp(x), wsp::log(x), wsp::tanh(x)};
        for (int k = 0; k < 3; ++k) {
            int64_t e = ulps(got[k], want[k]);
            if (e > worst[k]) worst[k] = e, at[k] = x;
        }
    }
    for (uint32_t h = 0; h < 65536; ++h) {
        float f = wsp::f16_to_f32((uint16_t)h);
        if (!same(f, reference::f16_to_f32((uint16_t)h))) conversions_wrong++;
        if (f == f && wsp::f32_to_f16(f) != h) conversions_wrong++;
        if (!same(wsp::bf16_to_f32((uint16_t)h), wsp::bits<float>(h << 16))) conversions_wrong++;
    }
    bool ok = conversions_wrong == 0;
    for (int k = 0; k < 3; ++k) {
        printf("%s: worst %lld ulp at %a\n", names[k], (long long)worst[k], at[k]);
        ok = ok && worst[k] <= 2;
    }
    printf("conversions differing from the reference: %llu\n", (unsigned long long)conversions_wrong);
    return ok ? 0 : 1;
}
