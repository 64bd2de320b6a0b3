#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The host's predicate ([`lossless_relay::host::Filter`]: which frames an
//! interface of the relay hands over) against the classic BPF programs the
//! daemon's packet sockets filter with (`lossless_sys::batch::Filter`), run
//! in lossless-sys's interpreter, on generated frames. The lab uses the
//! predicate itself, so the lab and the daemon see the same frames. (The XDP
//! programs are checked against it in losslessd's `tests/relay_xdp.rs`.)

use lossless_relay::example::{self, probe_frame, DC2_GW, KINDS};
use lossless_relay::host::{untagged, Filter};
use lossless_relay::{Host, Port, RelaySection};
use lossless_sys::batch::Filter as Bpf;
use proptest::prelude::*;

/// Every filter a `[relay]` section can ask for (with a VXLAN port of its
/// own), beside the socket filter losslessd opens for it
/// (`losslessd/src/relay/mod.rs`).
fn filters(port: u16) -> [(Filter, Bpf); 5] {
    [
        (Filter::MacControl, Bpf::MacControl),
        (Filter::Srv6, Bpf::Srv6),
        (Filter::Mpls, Bpf::Mpls),
        (Filter::Udp { port: 4789 }, Bpf::Udp { port: 4789 }),
        (Filter::Udp { port }, Bpf::Udp { port }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn the_socket_filters_pass_what_the_predicate_passes(
        seed in proptest::collection::vec(any::<u8>(), 0..48),
        port in any::<u16>(),
    ) {
        let frame = probe_frame(&seed, DC2_GW, port);
        // The socket's filter sees the frame with its outer tag taken off.
        let seen = untagged(&frame).unwrap_or_else(|| frame.clone());
        for (f, bpf) in filters(port) {
            prop_assert_eq!(f.passes(&seen), bpf.accepts(&seen), "{:?} on {:02x?}", f, seen);
            prop_assert_eq!(f.takes(&frame), bpf.accepts(&seen), "{:?} on {:02x?}", f, frame);
        }
    }

    #[test]
    fn random_octets_are_judged_alike(frame in proptest::collection::vec(any::<u8>(), 0..80)) {
        for (f, bpf) in filters(8472) {
            prop_assert_eq!(f.passes(&frame), bpf.accepts(&frame), "{:?}", f);
        }
    }
}

#[test]
fn the_host_asks_for_the_filters_each_side_needs() {
    for kind in KINDS {
        let cfg = example::pe(2, kind);
        let host = Host::new(RelaySection::Pe(cfg.clone())).unwrap();
        let links = host.links();
        assert_eq!(links.len(), 2);
        assert_eq!(
            (links[0].side, links[0].filter),
            (Port::Dc, Filter::MacControl)
        );
        assert_eq!(links[1].side, Port::Wan);
        assert_eq!(links[1].filter, Filter::wan(&cfg.tunnel), "{kind:?}");
        // What the tunnel carries passes the WAN side's filter.
        let mut pe2 = lossless_relay::Relay::new(cfg, lossless_relay::Instant::ZERO).unwrap();
        let pfc = example::pfc(DC2_GW, 0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0]);
        pe2.handle_frame(lossless_relay::Instant::ZERO, Port::Dc, &pfc);
        let tunnelled = pe2.poll_transmit().unwrap().frame.to_vec();
        assert!(host.takes(Port::Wan, &tunnelled), "{kind:?}");
        assert!(!host.takes(Port::Dc, &tunnelled), "{kind:?}");
        assert!(host.takes(Port::Dc, &pfc) && !host.takes(Port::Wan, &pfc));
    }
}
