//! A live capture misses nothing sent between `Capture::start` returning and
//! `Capture::stop` being called: tshark says "Capturing on" before its capture
//! process has opened the socket, so `start` waits for the socket with the filter in
//! place; libpcap hands frames over a ring block at a time, so `stop` lets the last
//! block go out before it ends the capture. Fails without either: a frame sent at
//! once after the start, the capture stopped at once after it.

use lossless_testkit::{lldpdu, require, tshark_fields, Capture, Injector, Oracle, Pair, TempDir};

#[test]
fn a_frame_sent_as_soon_as_the_capture_started_is_captured() {
    if !require(
        "a_frame_sent_as_soon_as_the_capture_started_is_captured",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        return;
    }
    let p = Pair::up();
    let dir = TempDir::new();
    let tx = Injector::open(&p.a, "va");
    for round in 0..3 {
        let pcap = dir.path().join(format!("vb-{round}.pcap"));
        let mut cap = Capture::start(&p.b, "vb", "ether proto 0x88cc", &pcap);
        tx.send(&lldpdu([2, 0, 0, 0, 0x77, round], 120));
        // Not captured: the filter is LLDP only.
        tx.send(&lossless_testkit::pfc_frame());
        cap.stop();
        let rows = tshark_fields(&pcap, &[], &["eth.src"]).rows;
        assert_eq!(
            rows,
            [[format!("02:00:00:00:77:{round:02x}")]],
            "round {round}: the one LLDPDU sent right after the start"
        );
    }
}
