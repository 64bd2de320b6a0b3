//! Every prefix of a full CEE LLDPDU (and frame) is refused, none panics.

mod common;

use common::*;
use lossless_wire::{DecodeErrorKind, Frame, Lldpdu, MacControl};

#[test]
fn every_truncated_lldpdu_is_refused() {
    for h in LLDPAD_FRAMES {
        let frame = hex(h);
        let pdu = &frame[ETH_LEN..];
        assert!(Lldpdu::parse(pdu).is_ok());
        for n in 0..pdu.len() {
            let e = Lldpdu::parse(&pdu[..n]).expect_err("a prefix must not parse");
            assert!(e.offset <= n, "offset {} beyond prefix {n}: {e}", e.offset);
            assert!(
                matches!(
                    e.kind,
                    DecodeErrorKind::Truncated { .. }
                        | DecodeErrorKind::LengthBeyondContainer { .. }
                        | DecodeErrorKind::MissingEnd
                ),
                "prefix {n}: {e}"
            );
        }
    }
}

#[test]
fn every_truncated_frame_is_refused() {
    let frame = hex(LLDPAD_1);
    for n in 0..frame.len() {
        assert!(Frame::parse(&frame[..n]).is_err(), "prefix {n}");
    }
}

#[test]
fn every_truncated_reference_lldpdu_is_refused() {
    let pdu = lldpdu_with(&hex(REFERENCE_CEE_TLV));
    for n in 0..pdu.len() {
        assert!(Lldpdu::parse(&pdu[..n]).is_err(), "prefix {n}");
    }
}

#[test]
fn every_truncated_mac_control_is_refused() {
    let pfc = hex("0101 0018 0000 0000 0000 ffff ffff 0000 0000 0000");
    for n in 0..pfc.len() {
        let e = MacControl::parse(&pfc[..n]).expect_err("prefix");
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e}");
    }
    let pause = hex("0001 ffff");
    for n in 0..pause.len() {
        assert!(MacControl::parse(&pause[..n]).is_err(), "prefix {n}");
    }
}
