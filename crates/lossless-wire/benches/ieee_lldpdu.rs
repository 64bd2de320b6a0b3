//! Cost of the receive and transmit paths for an LLDPDU with the four IEEE
//! 802.1Qaz TLVs: Chassis ID, Port ID, TTL, ETS Configuration, ETS
//! Recommendation, PFC Configuration, Application Priority with 8 DSCP
//! entries, End. Targets: parse and validate <= 300 ns median, emit <= 150 ns.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig,
    PriorityMap, Selector, Tsa,
};
use lossless_wire::{Lldpdu, MacAddr};

fn lldpdu_bytes() -> Vec<u8> {
    let mac = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    let table = EtsTable {
        prio_tc: [0, 0, 0, 1, 1, 0, 2, 2],
        tc_bw: [40, 60, 0, 0, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    let dscp: Vec<AppPriority> = [
        (0, 0),
        (1, 10),
        (2, 18),
        (3, 26),
        (3, 24),
        (5, 46),
        (6, 48),
        (7, 56),
    ]
    .into_iter()
    .map(|(priority, protocol)| AppPriority {
        priority,
        selector: Selector::DSCP,
        protocol,
    })
    .collect();
    pdu.ieee_dcbx = IeeeDcbx::new(
        Some(EtsConfig {
            willing: false,
            cbs: false,
            max_tcs: 8,
            table,
        }),
        Some(EtsRecommendation { table }),
        Some(PfcConfig {
            enabled: PriorityMap(0x18),
            ..PfcConfig::default()
        }),
        Some(AppPriorityTable::try_from(&dscp[..]).expect("fits")),
    );
    let mut out = vec![0u8; pdu.buffer_len()];
    pdu.emit(&mut out).expect("emits");
    out
}

/// Parse (which applies every rule to the four TLVs) plus what a receiver
/// checks before handing them to DCBX: none malformed, the APP table's size.
/// The LLDPDU is looked at where parse left it: moving it out of the
/// `Result` would copy its 2.4 kB (the DCBX tables are inline), a cost of the
/// caller's choosing.
fn parse_and_validate(bytes: &[u8]) -> usize {
    let parsed = Lldpdu::parse(bytes);
    let Ok(pdu) = &parsed else {
        return 0;
    };
    let ieee = &pdu.ieee_dcbx;
    if ieee.errors().next().is_some() {
        return 0;
    }
    let mut ok = 0;
    ok += usize::from(matches!(ieee.ets_config, Some(Ok(_))));
    ok += usize::from(matches!(ieee.ets_recommendation, Some(Ok(_))));
    ok += usize::from(matches!(ieee.pfc, Some(Ok(_))));
    if let Some(Ok(app)) = &ieee.app {
        ok += app.len();
    }
    ok
}

fn bench(c: &mut Criterion) {
    eprintln!("machine: {}", lossless_testkit::machine());
    let bytes = lldpdu_bytes();
    assert_eq!(parse_and_validate(&bytes), 3 + 8);
    eprintln!("LLDPDU: {} bytes", bytes.len());

    c.bench_function("ieee_lldpdu/parse_validate", |b| {
        b.iter(|| parse_and_validate(black_box(&bytes)))
    });

    let pdu = Lldpdu::parse(&bytes).expect("valid");
    let mut buf = vec![0u8; 1500];
    c.bench_function("ieee_lldpdu/emit", |b| {
        b.iter(|| black_box(&pdu).emit(black_box(&mut buf)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
