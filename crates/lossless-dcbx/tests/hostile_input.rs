//! Malformed and unusual input from the network reaches the machines as data:
//! counted, reported, never a panic, never lost state.

use lossless_dcbx::{Agent, DcbxMode, Event, FeatureId, Instant, PortConfig, Reason};
use lossless_wire::MacAddr;

const PEER: [u8; 6] = [2, 0, 0, 0, 0, 0x0a];

fn tlv(t: u8, body: &[u8]) -> Vec<u8> {
    let mut v = (((t as u16) << 9) | body.len() as u16)
        .to_be_bytes()
        .to_vec();
    v.extend_from_slice(body);
    v
}

fn control(seq: u32, ack: u32) -> Vec<u8> {
    let mut b = vec![0, 0];
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&ack.to_be_bytes());
    tlv(1, &b)
}

/// Not willing, enabled: PG 0,0,0,1,1,1,15,2 at 25/75.
fn pg() -> Vec<u8> {
    tlv(
        2,
        &[
            0, 0, 0x80, 0, 0x00, 0x01, 0x11, 0xf2, 25, 75, 0, 0, 0, 0, 0, 0, 8,
        ],
    )
}

/// Not willing, enabled: PFC on priorities 3 and 4.
fn pfc(map: u8) -> Vec<u8> {
    tlv(3, &[0, 0, 0x80, 0, map, 8])
}

fn app() -> Vec<u8> {
    tlv(4, &[0, 0, 0x80, 0, 0x89, 0x06, 0x00, 0x1b, 0x21, 0x08])
}

/// A whole LLDP frame from PEER with the given CEE sub-TLVs (None: no CEE TLV).
fn frame(subs: Option<&[Vec<u8>]>, ttl: u16) -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e];
    f.extend_from_slice(&PEER);
    f.extend_from_slice(&[0x88, 0xcc]);
    let mut chassis = vec![4];
    chassis.extend_from_slice(&PEER);
    f.extend(tlv(1, &chassis));
    let mut port = vec![3];
    port.extend_from_slice(&PEER);
    f.extend(tlv(2, &port));
    f.extend(tlv(3, &ttl.to_be_bytes()));
    if let Some(subs) = subs {
        let mut body = vec![0x00, 0x1b, 0x21, 0x02];
        for s in subs {
            body.extend_from_slice(s);
        }
        f.extend(tlv(127, &body));
    }
    f.extend([0, 0]);
    while f.len() < 60 {
        f.push(0);
    }
    f
}

/// A willing host running CEE DCBX only (the frames below are CEE).
fn host() -> Agent {
    let mut cfg = PortConfig::new(MacAddr([2, 0, 0, 0, 0, 0x0b]));
    cfg.dcbx.mode = DcbxMode::Cee;
    let mut a = Agent::new(cfg, Instant::ZERO).expect("valid default config");
    a.handle_link(Instant::ZERO, true);
    let mut buf = Vec::new();
    while a.poll_transmit(&mut buf) {}
    while a.poll_event().is_some() {}
    a
}

fn t(ms: u64) -> Instant {
    Instant::from_duration(std::time::Duration::from_millis(ms))
}

fn events(a: &mut Agent) -> Vec<Event> {
    std::iter::from_fn(|| a.poll_event()).collect()
}

#[test]
fn well_formed_peer_is_adopted() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(Some(&[control(1, 1), pg(), pfc(0x18), app()]), 120),
    );
    assert_eq!(a.pfc().reason, Reason::AdoptedPeer);
    assert_eq!(a.pfc().oper_cfg.priorities.0, 0x18);
    assert!(a.all_syncd());
}

#[test]
fn duplicate_feature_sub_tlv_is_an_error_for_that_feature() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(
            Some(&[control(1, 1), pg(), pfc(0x18), pfc(0x08), app()]),
            120,
        ),
    );
    assert_eq!(a.pfc().reason, Reason::DuplicateTlv);
    assert!(a.pfc().error && !a.pfc().oper_mode);
    assert_eq!(
        a.pg().reason,
        Reason::AdoptedPeer,
        "other features unaffected"
    );
    assert_eq!(a.dcbx_stats().duplicates, 1);
    let ev = events(&mut a);
    assert!(ev.contains(&Event::ErrorSet {
        feature: FeatureId::Pfc,
        reason: Reason::DuplicateTlv
    }));
}

#[test]
fn duplicate_control_is_an_error_for_every_feature() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(
            Some(&[control(1, 1), pg(), control(2, 1), pfc(0x18), app()]),
            120,
        ),
    );
    for r in [a.pg().reason, a.pfc().reason, a.app().reason] {
        assert_eq!(r, Reason::DuplicateTlv);
    }
}

#[test]
fn malformed_feature_is_treated_as_absent_and_reported() {
    let mut a = host();
    // PG with a PGID of 9 (only 0..7 and 15 exist).
    let bad_pg = tlv(
        2,
        &[
            0, 0, 0x80, 0, 0x90, 0x01, 0x11, 0xf2, 25, 75, 0, 0, 0, 0, 0, 0, 8,
        ],
    );
    a.handle_frame(
        t(1),
        &frame(Some(&[control(1, 1), bad_pg, pfc(0x18), app()]), 120),
    );
    assert_eq!(a.pg().reason, Reason::PeerFeatureInvalid);
    assert!(a.pg().error);
    assert_eq!(a.pfc().reason, Reason::AdoptedPeer);
    assert_eq!(a.dcbx_stats().invalid_features, 1);
    // Counted by the field at fault, as the metrics label it.
    let by_field: Vec<_> = a.decode_errors().iter().collect();
    assert_eq!(by_field, [("dcbx.pg.pgid", "bad_value", 1)]);
}

#[test]
fn zero_length_sub_tlv_drops_the_whole_lldpdu_and_keeps_state() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(Some(&[control(1, 1), pg(), pfc(0x18), app()]), 120),
    );
    let before = a.status();
    a.handle_frame(
        t(2),
        &frame(Some(&[control(2, 1), vec![0x06, 0x00], pfc(0x08)]), 120),
    );
    let after = a.status();
    assert_eq!(a.lldp_stats().frames_in_errors, 1);
    assert_eq!(
        after.pfc.oper, before.pfc.oper,
        "nothing of the bad frame was applied"
    );
    assert_eq!(after.control, before.control);
    let discarded: Vec<(String, String)> = events(&mut a)
        .iter()
        .filter_map(|e| match e {
            Event::FrameDiscarded(d) => Some((d.field.to_string(), d.kind.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        discarded,
        [("dcbx.subtlv.length".to_string(), "zero_length".to_string())]
    );
    let by_field: Vec<_> = a.decode_errors().iter().collect();
    assert_eq!(by_field, [("dcbx.subtlv.length", "zero_length", 1)]);
}

#[test]
fn sub_tlv_running_past_its_tlv_is_rejected() {
    let mut a = host();
    let mut f = frame(Some(&[control(1, 1), pfc(0x18)]), 120);
    // Claim a PFC body of 40 bytes where 6 are present.
    let pos = f
        .windows(2)
        .position(|w| w == [0x06, 0x06])
        .expect("pfc header");
    f[pos + 1] = 40;
    a.handle_frame(t(1), &f);
    assert_eq!(a.lldp_stats().frames_in_errors, 1);
    assert!(a.neighbors().is_empty());
}

#[test]
fn missing_control_means_no_dcbx_peer() {
    let mut a = host();
    a.handle_frame(t(1), &frame(Some(&[pg(), pfc(0x18)]), 120));
    assert_eq!(a.dcbx_stats().missing_control, 1);
    assert_eq!(a.pfc().reason, Reason::PeerNoDcbx);
    assert!(!a.pfc().oper_mode && !a.pfc().error);
}

#[test]
fn cin_peer_is_recognised_not_negotiated() {
    let mut a = host();
    let mut f = frame(None, 120);
    // Insert a CIN (subtype 1) TLV before End.
    let end = f.len() - f.iter().rev().take_while(|b| **b == 0).count();
    let cin = tlv(127, &[0x00, 0x1b, 0x21, 0x01, 0x00, 0x00, 0x00, 0x00]);
    f.splice(end.., cin.into_iter().chain([0, 0]));
    a.handle_frame(t(1), &f);
    assert_eq!(a.dcbx_stats().cin_tlvs, 1);
    assert_eq!(a.pfc().reason, Reason::PeerCin);
    assert_eq!(a.status().neighbors[0].dcbx, "cin");
}

#[test]
fn the_neighbours_8023_maximum_frame_size_is_kept_and_a_malformed_one_is_not() {
    let with = |body: &[u8]| {
        let mut f = frame(None, 120);
        let end = f.len() - f.iter().rev().take_while(|b| **b == 0).count();
        let mut info = vec![0x00, 0x12, 0x0f, 0x04];
        info.extend_from_slice(body);
        f.splice(end.., tlv(127, &info).into_iter().chain([0, 0]));
        f
    };
    let mut a = host();
    a.handle_frame(t(1), &frame(None, 120));
    assert_eq!(a.status().neighbors[0].max_frame_size, None);
    a.handle_frame(t(2), &with(&9216u16.to_be_bytes()));
    assert_eq!(a.status().neighbors[0].max_frame_size, Some(9216));
    // One octet short: not a Maximum Frame Size, and the last value is not kept.
    a.handle_frame(t(3), &with(&[0x24]));
    assert_eq!(a.status().neighbors[0].max_frame_size, None);
}

#[test]
fn garbage_never_panics_and_only_lldp_is_counted() {
    let mut a = host();
    let good = frame(Some(&[control(1, 1), pg(), pfc(0x18), app()]), 120);
    // Every truncation and every single-byte corruption of a good frame.
    for n in 0..good.len() {
        a.handle_frame(t(1), &good[..n]);
    }
    for i in 0..good.len() {
        for v in [0x00, 0xff, 0x7f] {
            let mut f = good.clone();
            f[i] = v;
            a.handle_frame(t(2), &f);
        }
    }
    // Not LLDP: ignored without counting.
    let mut other = good.clone();
    other[12] = 0x08;
    other[13] = 0x00;
    let before = *a.lldp_stats();
    a.handle_frame(t(3), &other);
    assert_eq!(a.lldp_stats().frames_in, before.frames_in);
}

#[test]
fn shutdown_from_peer_deletes_it_and_resets_control() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(Some(&[control(1, 1), pg(), pfc(0x18), app()]), 120),
    );
    assert_eq!(a.control().ack, 1);
    a.handle_frame(t(2), &frame(None, 0));
    assert!(a.neighbors().is_empty());
    assert_eq!(a.pfc().reason, Reason::PeerLost);
    assert_eq!(a.control().ack, 0);
}

#[test]
fn expiry_noticed_on_an_ignored_frame_still_drops_the_peer() {
    let mut a = host();
    a.handle_frame(
        t(1),
        &frame(Some(&[control(1, 1), pg(), pfc(0x18), app()]), 120),
    );
    assert_eq!(a.pfc().reason, Reason::AdoptedPeer);
    // No timeout call: the next input after the TTL ran out is a non-LLDP frame.
    let mut other = frame(None, 120);
    other[12] = 0x08;
    other[13] = 0x00;
    a.handle_frame(t(121_001), &other);
    assert!(a.neighbors().is_empty());
    assert_eq!(a.pfc().reason, Reason::PeerLost);
    assert!(!a.pfc().oper_mode && a.pfc().error);
}
