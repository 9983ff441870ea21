//! Native medians of the two per-step costs of the core, side by side with a transcription of
//! the seed's JS algorithm where one exists:
//! - token choice over the project's 14630 logits (`TokenChooser::choose` vs the seed's
//!   `chooseToken` shape: a fresh `Set` of the sequence, a tail scan, a closure per id);
//! - preprocessing a 1024×768 RGBA image (opaque, and with transparency).
//!
//! Run: `cargo run --release -p ocr-bench-core --example bench_core`

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use ocr_bench_core::choose::{ChooserOptions, TokenChooser};
use ocr_bench_core::preprocess::Preprocessor;
use ocr_bench_core::vocab::Vocabulary;

/// Median wall time of `runs` calls, in microseconds.
fn median_us(runs: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: first-touch page faults, lazily sized buffers
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

/// The seed's `chooseToken`, shape for shape (see crate/src/choose.rs for the semantics).
fn seed_choose(logits: &[f32], sequence: &[u32], tokens: &[u32], content: &HashSet<u32>) -> u32 {
    let seen: HashSet<u32> = sequence.iter().copied().collect();
    let mut blocked = None;
    if let Some(&last) = tokens.last() {
        if content.contains(&last) {
            let run = tokens.iter().rev().take_while(|&&t| t == last).count();
            if run >= 12 {
                blocked = Some(last);
            }
        }
    }
    let adjusted = |index: u32| -> f64 {
        if Some(index) == blocked {
            return f64::NEG_INFINITY;
        }
        let value = f64::from(logits[index as usize]);
        if !seen.contains(&index) {
            value
        } else if value < 0.0 {
            value * 1.2
        } else {
            value / 1.2
        }
    };
    let mut best = (0, adjusted(0));
    for token in 1..logits.len() as u32 {
        let value = adjusted(token);
        if value > best.1 {
            best = (token, value);
        }
    }
    best.0
}

/// A deterministic pseudo-random byte stream (xorshift), so runs compare like with like.
fn bytes(n: usize, mut state: u32) -> Vec<u8> {
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect()
}

fn main() {
    let entries: Vec<String> =
        serde_json::from_str(include_str!("../../models/vocab.json")).expect("models/vocab.json");
    let vocabulary = Vocabulary::new(entries).expect("vocabulary");
    let size = vocabulary.size();
    let logits: Vec<f32> = bytes(size, 7)
        .iter()
        .map(|&b| f32::from(b) / 16.0 - 8.0)
        .collect();

    // A mid-sequence state: BOS and 40 decoded tokens, as in a long reading.
    let decoded: Vec<u32> = (0..40).map(|i| 4 + (i * 331) % (size as u32 - 4)).collect();
    let mut chooser = TokenChooser::new(&vocabulary, ChooserOptions::default()).expect("chooser");
    for &id in &decoded {
        chooser.push(id).expect("push");
    }
    let sequence: Vec<u32> = std::iter::once(1).chain(decoded.iter().copied()).collect();
    let content: HashSet<u32> = (0..size as u32)
        .filter(|&id| vocabulary.is_content(id.into()))
        .collect();
    assert_eq!(
        chooser.choose(&logits).expect("choose"),
        seed_choose(&logits, &sequence, &decoded, &content),
        "the two must agree before their speeds are compared"
    );

    let runs = 2001;
    let ours = median_us(runs, || {
        black_box(chooser.choose(black_box(&logits)).expect("choose"));
    });
    let seed = median_us(runs, || {
        black_box(seed_choose(
            black_box(&logits),
            &sequence,
            &decoded,
            &content,
        ));
    });
    println!("choose over {size} logits: median {ours:.1} us; seed-shaped transcription {seed:.1} us; ratio seed/ours {:.1}x", seed / ours);

    let (width, height) = (1024u32, 768u32);
    let mut opaque = bytes((width * height * 4) as usize, 11);
    opaque.iter_mut().skip(3).step_by(4).for_each(|a| *a = 255);
    let transparent = bytes((width * height * 4) as usize, 13);
    let mut preprocessor = Preprocessor::new();
    let runs = 41;
    let opaque_us = median_us(runs, || {
        black_box(
            preprocessor
                .run(black_box(&opaque), width, height)
                .expect("preprocess"),
        );
    });
    let transparent_us = median_us(runs, || {
        black_box(
            preprocessor
                .run(black_box(&transparent), width, height)
                .expect("preprocess"),
        );
    });
    println!(
        "preprocess {width}x{height} RGBA -> [1,3,224,224]: median {:.2} ms opaque, {:.2} ms with transparency",
        opaque_us / 1e3,
        transparent_us / 1e3
    );
}
