//! `calc` per port must stay under 1 us, so a 512-port switch recomputes in under 1 ms.
//! Prints the machine first: a figure without its CPU means little.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use lossless_headroom::dv::{parse_higher_layer, Inputs};
use lossless_headroom::medium::parse_medium;
use lossless_headroom::units::{parse_bytes, parse_duration, parse_length, parse_rate, Rate};
use lossless_headroom::wan::Wan;
use lossless_headroom::{calc, Request};

fn request(speed: &str, cable: &str, medium: &str) -> Request {
    let mut inputs = Inputs::new(
        parse_rate(speed).expect("speed"),
        parse_length(cable).expect("cable"),
        parse_medium(medium).expect("medium"),
    );
    inputs.higher_layer_delay = Some(parse_higher_layer("macsec+pipelining").expect("hd"));
    let mut r = Request::new(inputs);
    r.buffer = Some(parse_bytes("4MB").expect("buffer"));
    r
}

fn bench(c: &mut Criterion) {
    println!("machine: {}", lossless_testkit::machine());
    let one = request("10G", "100m", "cat6");
    c.bench_function("calc/one_port_10g_100m_cat6", |b| {
        b.iter(|| calc(black_box(&one)))
    });

    let mut dci = request("400G", "80km", "fiber");
    dci.wan = Some(Wan {
        delay: parse_duration("2ms").expect("delay"),
        rx_rate: Rate(400_000_000_000),
        tx_rate: Rate(0),
    });
    dci.buffer = Some(parse_bytes("200MB").expect("buffer"));
    c.bench_function("calc/one_port_400g_80km_wan", |b| {
        b.iter(|| calc(black_box(&dci)))
    });

    // A 512-port switch: mixed speeds and cable lengths.
    let speeds = ["10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G"];
    let cables = ["1m", "3m", "5m", "30m", "100m", "500m", "2km", "10km"];
    let ports: Vec<Request> = (0..512)
        .map(|p| request(speeds[p % 8], cables[(p / 8) % 8], "fiber"))
        .collect();
    c.bench_function("calc/switch_512_ports", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for r in &ports {
                if let Ok(rep) = calc(black_box(r)) {
                    sum = sum.wrapping_add(rep.headroom.bytes);
                }
            }
            sum
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
