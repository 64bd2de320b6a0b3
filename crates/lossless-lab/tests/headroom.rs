//! Adaptive headroom in the simulator: the capability in DCBX, the T1..T4 exchange and the
//! sizing, end to end on the real cores. Timestamps are the virtual clock, so every
//! measurement must equal the injected delay exactly.

mod common;
use common::*;

use lossless_dcbx::{Duration, Instant};
use lossless_lab::headroom::{expected_round_trip, outcomes, run_links};
use lossless_lab::pcap::write_pcap;
use lossless_lab::scenario::{headroom_links, host_config, switch_config};
use lossless_lab::Sim;
use lossless_node::config::HeadroomSettings;
use lossless_wire::measure::ETHERTYPE_MEASURE;

fn is_measure(bytes: &[u8]) -> bool {
    bytes.get(12..14) == Some(&ETHERTYPE_MEASURE.to_be_bytes()[..])
}

#[test]
fn every_link_length_is_measured_exactly_and_settles_within_a_second() {
    let mut sim = Sim::new(5).with_capture();
    let specs = headroom_links();
    let switches = run_links(&mut sim, &specs).expect("links");
    let out = outcomes(&sim, &specs, &switches, &Default::default()).expect("outcomes");
    assert_eq!(out.len(), 4);
    for o in &out {
        let m = o.measured.expect("measured");
        assert_eq!(m.round_trip, expected_round_trip(o), "{}", o.label);
        assert_eq!((m.valid, m.sent), (32, 32), "{}", o.label);
        // Link-up was at t = 0: settled within 1 s even on 80 km (a round trip of 0.8 ms).
        assert!(
            m.finished.since_epoch() < Duration::from_secs(1),
            "{}: {:?}",
            o.label,
            m.finished
        );
        let n = o.adaptive.expect("sized");
        assert_eq!(n.x_bit_times, m.round_trip.0 / 10, "100G: 10 ps per bit");
        assert_eq!(n.dv_bit_times, n.x_bit_times + 2 * 16_160 + 672);
        assert!(n.headroom.bytes * 8 >= n.dv_bit_times && n.headroom.bytes % 160 == 0);
    }
    // Longer links need more: strictly increasing headroom.
    let h: Vec<u64> = out
        .iter()
        .map(|o| o.adaptive.expect("sized").headroom.bytes)
        .collect();
    assert!(h.windows(2).all(|w| w[0] < w[1]), "{h:?}");
    // At most 100 measurement frames per port in the first round.
    let mut per_port = std::collections::HashMap::<usize, u32>::new();
    for f in sim.capture().iter().filter(|f| is_measure(&f.bytes)) {
        *per_port.entry(f.from).or_default() += 1;
    }
    assert_eq!(per_port.len(), 8, "both ends of every link measured");
    assert!(per_port.values().all(|&n| n <= 100), "{per_port:?}");
}

#[test]
fn measurement_needs_the_capability_on_both_ends_and_stops_when_withdrawn() {
    let mut sw = switch_config();
    sw.dcbx.headroom_measurement = true;
    let mut host = host_config();
    let mut p = pair_with(sw, host.clone(), Duration::from_micros(5), 0.0, 3);
    for n in [p.a, p.b] {
        p.sim
            .set_headroom(n, HeadroomSettings::default())
            .expect("session");
    }
    p.sim.set_link(p.seg, true);
    p.sim.run_for(Duration::from_secs(2));
    let st = p.sim.agent(p.a).status();
    assert!(st.headroom_measurement.local && !st.headroom_measurement.peer);
    assert!(
        !p.sim.capture().iter().any(|f| is_measure(&f.bytes)),
        "one end capable: nothing measured"
    );

    // The host turns it on: a new SeqNo carries the bit, and both ends measure.
    host.dcbx.headroom_measurement = true;
    p.sim.set_config(p.b, host.clone()).expect("config");
    p.sim.run_for(Duration::from_secs(2));
    assert!(p.sim.agent(p.a).status().headroom_measurement.peer);
    for n in [p.a, p.b] {
        let m = p
            .sim
            .measurement(n)
            .and_then(|s| s.last())
            .expect("measured");
        assert_eq!(m.round_trip.0, 10_000_000, "2 x 5 us");
    }

    // Withdrawn again: no round starts after the change.
    host.dcbx.headroom_measurement = false;
    p.sim.set_config(p.b, host).expect("config");
    let off_at = p.sim.now();
    p.sim.run_for(Duration::from_secs(200));
    assert!(!p.sim.agent(p.a).status().headroom_measurement.peer);
    let late: Vec<Instant> = p
        .sim
        .capture()
        .iter()
        .filter(|f| is_measure(&f.bytes) && f.at > off_at + Duration::from_millis(100))
        .map(|f| f.at)
        .collect();
    assert!(late.is_empty(), "measured after withdrawal at {late:?}");
}

/// tshark still decodes the PFC sub-TLV with the capability bit set, and never sees a
/// measurement frame as PAUSE or PFC.
#[test]
fn tshark_decodes_pfc_with_the_bit_and_takes_measurements_for_data() {
    if !lossless_testkit::require(
        "tshark_decodes_pfc_with_the_bit_and_takes_measurements_for_data",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let mut sw = switch_config();
    sw.dcbx.headroom_measurement = true;
    let mut host = host_config();
    host.dcbx.headroom_measurement = true;
    let mut p = pair_with(sw, host, Duration::from_micros(1), 0.0, 4);
    for n in [p.a, p.b] {
        p.sim
            .set_headroom(n, HeadroomSettings::default())
            .expect("session");
    }
    p.sim.set_link(p.seg, true);
    p.sim.run_for(Duration::from_millis(500));
    let frames = p.sim.capture().to_vec();
    let n_measure = frames.iter().filter(|f| is_measure(&f.bytes)).count();
    assert!(n_measure >= 2 * 96, "{n_measure}");
    // Our own check of the PFC sub-TLV: still 6 bytes, bit 4 of the flags set.
    for f in frames.iter().filter(|f| !is_measure(&f.bytes)) {
        let fr = lossless_wire::Frame::parse(&f.bytes).expect("valid");
        let lossless_wire::Payload::Lldp(pdu) = fr.payload else {
            panic!("LLDP expected")
        };
        let pfc = pdu
            .cee_dcbx
            .and_then(|c| c.pfc)
            .expect("pfc sub-TLV")
            .expect("valid pfc");
        assert_eq!(pfc.header.reserved_flags, 0x10);
        let raw = f
            .bytes
            .windows(3)
            .position(|w| w[0] == (3 << 1) && w[1] == 6 && w[2] == 0)
            .expect("PFC sub-TLV header: type 3, length 6");
        assert_eq!(f.bytes[raw + 4] & 0x1f, 0x10, "flags byte");
    }

    let dir = std::env::temp_dir().join(format!("lossless-hdrm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("hdrm.pcap");
    write_pcap(std::fs::File::create(&path).expect("pcap"), &frames).expect("write pcap");
    let fields = [
        "eth.type",
        "frame.protocols",
        "macc.opcode",
        "lldp.dcbx.feature.pfc.prio3",
        "lldp.dcbx.feature.pfc.prio4",
        "lldp.dcbx.feature.pfc.prio5",
        "lldp.dcbx.feature.pfc.numtcs",
        "lldp.dcbx.feature.enabled",
        "lldp.dcbx.feature.willing",
        "lldp.dcbx.feature.error",
        "_ws.expert",
    ];
    let decoded = lossless_testkit::tshark_fields(&path, &[], &fields);
    std::fs::remove_dir_all(&dir).ok();
    let rows: Vec<Vec<&str>> = decoded
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(rows.len(), frames.len());
    for (row, f) in rows.iter().zip(&frames) {
        assert_eq!(row[10], "", "expert info: {row:?}");
        if is_measure(&f.bytes) {
            assert_eq!(row[0], "0x88b5");
            assert_eq!(row[1], "eth:ethertype:data", "{row:?}");
            assert_eq!(row[2], "", "decoded as MAC control");
        } else {
            assert_eq!(row[0], "0x88cc");
            assert_eq!(row[7], "1,1,1");
            assert_eq!(row[9], "0,0,0");
            assert_eq!(row[6], "0x08", "PFC num_tcs at its offset");
            if f.from == p.a {
                assert_eq!((row[3], row[4], row[5]), ("1", "1", "0"));
                assert_eq!(row[8], "0,0,0");
            } else {
                assert_eq!(row[8], "1,1,1");
            }
        }
    }
}
