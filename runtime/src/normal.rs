//! `randn(seed, std)`: NumPy's `np.random.default_rng(seed).standard_normal(shape,
//! dtype=np.float32)`, sample for sample, so a user rebuilds any input in NumPy. The seed goes
//! through NumPy's `SeedSequence` into a PCG64 (`rand_pcg::Lcg128Xsl64` is the same generator),
//! whose 64-bit outputs are split into two 32-bit words low half first, as NumPy's PCG64
//! hands out 32-bit words; each sample is drawn with the float32 ziggurat on the tables
//! `ziggurat.rs` holds.

use crate::ziggurat::{FI, KI, WI};
use rand::TryRng;
use rand_pcg::Lcg128Xsl64;

/// NumPy's `SeedSequence(seed).generate_state(4, np.uint64)`: the seed's 32-bit words mixed
/// into a pool of four by O'Neill's hash, then drawn out by a second hash.
fn seed_sequence_state(seed: u64) -> [u64; 4] {
    const INIT_A: u32 = 0x43b0_d7e5;
    const MULT_A: u32 = 0x931e_8875;
    const INIT_B: u32 = 0x8b51_f9dd;
    const MULT_B: u32 = 0x58f3_8ded;
    const MIX_L: u32 = 0xca01_f9dd;
    const MIX_R: u32 = 0x4973_f715;
    // The seed as little-endian 32-bit words, `[0]` for zero.
    let entropy: Vec<u32> = if seed >> 32 == 0 {
        vec![seed as u32]
    } else {
        vec![seed as u32, (seed >> 32) as u32]
    };
    let mut hash = INIT_A;
    let mut hashmix = |value: u32| {
        let mut v = value ^ hash;
        hash = hash.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash);
        v ^ (v >> 16)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_L.wrapping_mul(x).wrapping_sub(MIX_R.wrapping_mul(y));
        r ^ (r >> 16)
    };
    let mut pool = [0u32; 4];
    for (i, p) in pool.iter_mut().enumerate() {
        *p = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..4 {
        for dst in 0..4 {
            if src != dst {
                pool[dst] = mix(pool[dst], hashmix(pool[src]));
            }
        }
    }
    let mut hash = INIT_B;
    let mut words = [0u32; 8];
    for (i, w) in words.iter_mut().enumerate() {
        let mut v = pool[i % 4] ^ hash;
        hash = hash.wrapping_mul(MULT_B);
        v = v.wrapping_mul(hash);
        *w = v ^ (v >> 16);
    }
    std::array::from_fn(|i| u64::from(words[2 * i]) | u64::from(words[2 * i + 1]) << 32)
}

/// NumPy's `default_rng(seed)` bit generator, handing out 32-bit words.
pub struct NumpyNormal {
    pcg: Lcg128Xsl64,
    /// The high half of the last 64-bit output, not handed out yet.
    spare: Option<u32>,
    /// 32-bit words handed out so far: where in the stream the next sample starts.
    words: u64,
}

impl NumpyNormal {
    pub fn new(seed: u64) -> NumpyNormal {
        let s = seed_sequence_state(seed);
        let state = u128::from(s[0]) << 64 | u128::from(s[1]);
        let stream = u128::from(s[2]) << 64 | u128::from(s[3]);
        NumpyNormal {
            pcg: Lcg128Xsl64::new(state, stream),
            spare: None,
            words: 0,
        }
    }

    /// The generator of `seed` after `words` 32-bit words, without drawing them: PCG64 jumps
    /// ahead in O(log n) steps.
    pub fn at(seed: u64, words: u64) -> NumpyNormal {
        let mut g = NumpyNormal::new(seed);
        g.pcg.advance(u128::from(words / 2));
        g.words = words & !1;
        if words % 2 == 1 {
            g.next_u32();
        }
        g
    }

    fn next_u32(&mut self) -> u32 {
        self.words += 1;
        if let Some(high) = self.spare.take() {
            return high;
        }
        let Ok(word) = self.pcg.try_next_u64();
        self.spare = Some((word >> 32) as u32);
        word as u32
    }

    /// A uniform float in [0, 1) from the top 24 bits of a word.
    fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// Fills `out` with the next samples, in order.
    fn draw(&mut self, out: &mut [f32]) {
        out.iter_mut().for_each(|x| *x = self.sample());
    }

    /// The next standard normal float32 sample.
    pub fn sample(&mut self) -> f32 {
        // The ziggurat's R and 1/R, rounded to float32 as NumPy's float constants are.
        const R: f32 = 3.654_152_885_361_009_f64 as f32;
        const INV_R: f32 = 0.273_661_237_329_758_3_f64 as f32;
        loop {
            let r = self.next_u32();
            let strip = (r & 0xff) as usize;
            let negative = (r >> 8) & 1 == 1;
            let magnitude = (r >> 9) & 0x7f_ffff;
            let x = magnitude as f32 * WI[strip];
            let x = if negative { -x } else { x };
            // Inside the strip's rectangle: most samples end here.
            if magnitude < KI[strip] {
                return x;
            }
            if strip == 0 {
                // The tail beyond R, by Marsaglia's method (1 - U keeps the log finite).
                loop {
                    let xx = -INV_R * (-self.next_f32()).ln_1p();
                    let yy = -(-self.next_f32()).ln_1p();
                    if yy + yy > xx * xx {
                        return if (magnitude >> 8) & 1 == 1 {
                            -(R + xx)
                        } else {
                            R + xx
                        };
                    }
                }
            }
            // Between the rectangle and the curve: accepted under the density, which NumPy
            // evaluates in double precision.
            let y = (FI[strip - 1] - FI[strip]) * self.next_f32() + FI[strip];
            let x64 = f64::from(x);
            if f64::from(y) < (-0.5 * x64 * x64).exp() {
                return x;
            }
        }
    }
}

/// Fills `out` with the first `out.len()` samples of `NumpyNormal::new(seed)`, with up to
/// `workers` threads, exactly as one thread would.
///
/// A sample takes one 32-bit word, and a few more in the ziggurat's rare wedge and tail cases,
/// so where the k-th part of the output starts in the stream is not known in advance. Each
/// thread jumps to its share of the stream (PCG64 advances in O(log n)), draws samples from
/// there into its share of `out`, and notes where its first samples started. The parts are
/// then joined in order: the thread before ends at a sample start, and within a few samples
/// the next thread's draws start there too (both mostly step one word at a time), so its
/// samples from that point are the true ones and move down to follow the previous part's.
/// The stream words the parts did not reach are drawn at the end. Should a join not be found
/// among the first samples noted (vanishingly rare), the whole output is drawn in one thread.
pub fn fill(seed: u64, out: &mut [f32], workers: usize) {
    /// The sample starts each part notes, to find where the previous part ends.
    const NOTED: usize = 64;
    let n = out.len();
    let parts = workers.clamp(1, 64).min(n / (1 << 16)).max(1);
    if parts == 1 {
        return NumpyNormal::new(seed).draw(out);
    }
    // Part k draws from word `bounds[k]` until a sample would start at `bounds[k + 1]` or
    // later, into out[bounds[k]..]: no more samples than words, so it stays in its share.
    let bounds: Vec<usize> = (0..=parts).map(|k| (k * n / parts) & !1).collect();
    struct Part {
        /// Samples drawn, the first sample's start, and the generator after the last.
        drawn: usize,
        starts: Vec<u64>,
        end: NumpyNormal,
    }
    let mut shares: Vec<&mut [f32]> = Vec::with_capacity(parts);
    let mut rest = &mut out[..];
    for k in 0..parts {
        let (share, tail) = rest.split_at_mut(bounds[k + 1] - bounds[k]);
        shares.push(share);
        rest = tail;
    }
    let drawn: Vec<Part> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(k, share)| {
                let (from, to) = (bounds[k] as u64, bounds[k + 1] as u64);
                s.spawn(move || {
                    let mut g = NumpyNormal::at(seed, from);
                    let mut starts = Vec::with_capacity(NOTED);
                    let mut drawn = 0;
                    while g.words < to {
                        if starts.len() < NOTED {
                            starts.push(g.words);
                        }
                        share[drawn] = g.sample();
                        drawn += 1;
                    }
                    Part {
                        drawn,
                        starts,
                        end: g,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a randn part"))
            .collect()
    });
    // Join the parts: part 0 starts the stream, so its samples are all true.
    let mut drawn = drawn.into_iter().enumerate();
    let (_, first) = drawn.next().expect("two parts or more");
    let (mut filled, mut end) = (first.drawn, first.end);
    for (k, part) in drawn {
        let Some(first) = part.starts.iter().position(|&w| w == end.words) else {
            return NumpyNormal::new(seed).draw(out);
        };
        let true_samples = bounds[k] + first..bounds[k] + part.drawn;
        // The true part starts after the previous one, and never past its own share.
        debug_assert!(filled <= true_samples.start);
        let count = true_samples.len().min(n - filled);
        out.copy_within(true_samples.start..true_samples.start + count, filled);
        filled += count;
        end = part.end;
    }
    end.draw(&mut out[filled..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `np.random.SeedSequence(s).generate_state(4, np.uint64)`, printed by NumPy 2.3.
    #[test]
    fn seed_sequence_matches_numpy() {
        let numpy: [(u64, [u64; 4]); 3] = [
            (
                0,
                [
                    0xdb2cd7e7b0f478be,
                    0xabf4641a2c71ba49,
                    0x20c6ed6d9d7b8d41,
                    0x2c4099de223c39d4,
                ],
            ),
            (
                12345,
                [
                    0xb5ae6482a03d837c,
                    0xbbe2996ffa1f7a2f,
                    0x64e39a9f37158f94,
                    0x3ebb0f96a013fd73,
                ],
            ),
            (
                (1 << 40) + 7,
                [
                    0x0d8672e10e3d1a15,
                    0x9aef4ada4ecfa161,
                    0x999c1c3b83dba903,
                    0x408927dc0dc8a316,
                ],
            ),
        ];
        for (seed, state) in numpy {
            assert_eq!(seed_sequence_state(seed), state, "seed {seed}");
        }
    }

    /// `np.random.default_rng(5).standard_normal(6, dtype=np.float32)`, printed by NumPy 2.3
    /// (the golden tests compare whole tensors).
    #[test]
    fn samples_match_numpy() {
        let numpy = [
            -1.2224977016448975,
            -2.138315439224243,
            -0.06472305208444595,
            -0.705551266670227,
            -0.9497596025466919,
            0.5609995722770691,
        ];
        let mut rng = NumpyNormal::new(5);
        for want in numpy {
            assert_eq!(f64::from(rng.sample()), want);
        }
    }

    /// The committed tables are what their generator prints.
    #[test]
    fn tables_are_generated() {
        let python = std::env::var_os("WSP_TEST_PYTHON").expect(
            "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
        );
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = std::process::Command::new(python)
            .arg(root.join("tables/ziggurat.py"))
            .output()
            .expect("run the generator");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let committed = std::fs::read(root.join("src/ziggurat.rs")).unwrap();
        assert!(
            out.stdout == committed,
            "src/ziggurat.rs is stale: run tables/ziggurat.py"
        );
    }

    /// A jump ahead lands where drawing word by word does, odd word counts included.
    #[test]
    fn jumping_ahead_equals_drawing() {
        let mut g = NumpyNormal::new(11);
        for _ in 0..1001 {
            g.next_u32();
        }
        let mut j = NumpyNormal::at(11, 1001);
        assert_eq!(j.words, 1001);
        for _ in 0..10 {
            assert_eq!(g.next_u32(), j.next_u32());
        }
    }

    /// Filled in parts by several threads, the samples are the one-thread stream exactly, for
    /// part counts whose joins land at different places in the stream.
    #[test]
    fn parallel_fill_is_the_sequential_stream() {
        let n = (1 << 18) + 12_345;
        for seed in [0, 3, 99] {
            let mut want = vec![0f32; n];
            fill(seed, &mut want, 1);
            let mut g = NumpyNormal::new(seed);
            assert!(want.iter().take(1000).all(|&x| x == g.sample()));
            for workers in [2, 3, 4] {
                let mut got = vec![f32::NAN; n];
                fill(seed, &mut got, workers);
                let first_bad = got
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(first_bad, None, "seed {seed}, {workers} workers");
            }
        }
    }
}
