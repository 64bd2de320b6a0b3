//! How the veth bench times and reports: polling until a condition holds (every
//! 0.5 ms for losslessd's control socket, every 10 ms for lldpad's tools), and
//! the median, minimum and maximum it prints of each figure.

use std::time::{Duration, Instant};

pub fn poll(limit: Duration, mut f: impl FnMut() -> bool) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(t0.elapsed().as_secs_f64() * 1e3);
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    None
}

pub fn poll_slow(limit: Duration, mut f: impl FnMut() -> bool) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(t0.elapsed().as_secs_f64() * 1e3);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

pub fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied()
}

pub fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

pub fn stats(name: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        println!("{name}: no samples");
        return;
    }
    println!(
        "{name}: median {:.1} ms, min {:.1}, max {:.1} ({n} runs)",
        v[n / 2],
        v[0],
        v[n - 1]
    );
}

pub fn frames(name: &str, v: &[f64]) {
    let (min, max) = v
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    match median(v) {
        Some(m) => println!(
            "{name}: LLDPDUs sent by both ends until then: median {m:.0}, min {min:.0}, max {max:.0}"
        ),
        None => println!("{name}: no samples"),
    }
}
