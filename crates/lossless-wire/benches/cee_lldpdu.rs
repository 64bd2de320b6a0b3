//! Cost of the receive and transmit paths for one full CEE LLDPDU: Chassis
//! ID, Port ID, TTL, CEE TLV (Control, PG, PFC, APP with 3 entries), End.
//! Target: <= 300 ns median each, so that LLDP never shows up next to the
//! DCBX state machines.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, Control, FeatureHeader, FeatureTlv, PfcConfig, PgConfig,
    PriorityMap, DCBX_OUI,
};
use lossless_wire::{CeeDcbx, Lldpdu, MacAddr};

fn entry(selector: AppSelector, protocol: u16, prio: u8) -> AppEntry {
    AppEntry {
        selector,
        protocol,
        oui: DCBX_OUI,
        priorities: PriorityMap(1 << prio),
    }
}

fn lldpdu_bytes() -> Vec<u8> {
    let mac = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    let on = FeatureHeader::new(true, false);
    pdu.cee_dcbx = Some(CeeDcbx::new(
        Control {
            seq: 2,
            ack: 1,
            ..Control::default()
        },
        Some(FeatureTlv::new(
            on,
            PgConfig {
                pgid: [0, 0, 0, 0, 1, 1, 1, 15],
                percent: [25, 75, 0, 0, 0, 0, 0, 0],
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            on,
            PfcConfig {
                priorities: PriorityMap(0x18),
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            FeatureHeader::new(true, true),
            AppConfig {
                entries: [
                    entry(AppSelector::ETHERTYPE, 0x8906, 3),
                    entry(AppSelector::PORT, 3260, 4),
                    entry(AppSelector::ETHERTYPE, 0x8914, 3),
                ]
                .into_iter()
                .collect(),
            },
        )),
    ));
    let mut out = vec![0u8; pdu.buffer_len()];
    pdu.emit(&mut out).expect("emits");
    out
}

/// Parse plus the checks a receiver makes before handing the TLV to DCBX.
fn parse_and_validate(bytes: &[u8]) -> usize {
    let Ok(pdu) = Lldpdu::parse(bytes) else {
        return 0;
    };
    let Some(cee) = &pdu.cee_dcbx else {
        return 0;
    };
    let mut ok = usize::from(cee.control.is_some());
    if let Some(Ok(pg)) = &cee.pg {
        ok += usize::from(pg.cfg.validate().is_ok());
    }
    if let Some(Ok(pfc)) = &cee.pfc {
        ok += usize::from(pfc.cfg.validate().is_ok());
    }
    if let Some(Ok(app)) = &cee.app {
        ok += usize::from(app.cfg.validate().is_ok());
    }
    ok + usize::from(cee.anomalies.is_empty())
}

fn bench(c: &mut Criterion) {
    eprintln!("machine: {}", lossless_testkit::machine());
    let bytes = lldpdu_bytes();
    assert_eq!(parse_and_validate(&bytes), 5);
    eprintln!("LLDPDU: {} bytes", bytes.len());

    c.bench_function("cee_lldpdu/parse_validate", |b| {
        b.iter(|| parse_and_validate(black_box(&bytes)))
    });

    let pdu = Lldpdu::parse(&bytes).expect("valid");
    let mut buf = vec![0u8; 1500];
    c.bench_function("cee_lldpdu/emit", |b| {
        b.iter(|| black_box(&pdu).emit(black_box(&mut buf)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
