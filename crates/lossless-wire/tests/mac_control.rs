//! PAUSE and PFC frames: golden bytes, reserved bits, short frames.

mod common;

use common::hex;
use lossless_wire::mac_control::MIN_PAYLOAD_LEN;
use lossless_wire::{
    emit_mac_control_frame, DecodeError, DecodeErrorKind as K, Frame, MacAddr, MacControl, Payload,
    VlanTag,
};

/// PFC pausing priorities 3 and 4 for 0xffff quanta (tshark: macc.opcode
/// 0x0101, macc.cbfc.enbv 0x0018, macc.cbfc.pause_time.c3 = c4 = 65535).
const PFC_FRAME: &str = "0180c2000001 020000000001 8808 \
     0101 0018 0000 0000 0000 ffff ffff 0000 0000 0000 \
     0000000000000000000000000000000000000000000000000000";
/// PAUSE for 0x1234 quanta.
const PAUSE_FRAME: &str = "0180c2000001 020000000001 8808 0001 1234 \
     000000000000000000000000000000000000000000000000000000000000000000000000000000000000";

fn pfc_3_4() -> MacControl {
    MacControl::Pfc {
        class_enable: 0x0018,
        quanta: [0, 0, 0, 0xffff, 0xffff, 0, 0, 0],
    }
}

#[test]
fn pfc_golden() {
    let f = hex(PFC_FRAME);
    assert_eq!(f.len(), 60);
    let frame = Frame::parse(&f).expect("valid");
    assert_eq!(frame.payload, Payload::MacControl(pfc_3_4()));
    let mut out = Vec::new();
    emit_mac_control_frame(
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr::MAC_CONTROL,
        None,
        &pfc_3_4(),
        &mut out,
    );
    assert_eq!(out, f);
}

#[test]
fn pause_golden() {
    let f = hex(PAUSE_FRAME);
    assert_eq!(f.len(), 60);
    let ctl = MacControl::Pause { quanta: 0x1234 };
    assert_eq!(
        Frame::parse(&f).expect("valid").payload,
        Payload::MacControl(ctl)
    );
    let mut out = Vec::new();
    emit_mac_control_frame(
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr::MAC_CONTROL,
        None,
        &ctl,
        &mut out,
    );
    assert_eq!(out, f);
    let mut payload = [0u8; MIN_PAYLOAD_LEN];
    ctl.emit(&mut payload);
    assert_eq!(ctl.buffer_len(), 46);
    assert_eq!(payload[..4], [0x00, 0x01, 0x12, 0x34]);
}

#[test]
fn tagged_pfc_frame() {
    let mut out = Vec::new();
    let tag = VlanTag {
        pcp: 7,
        dei: false,
        vid: 0,
    };
    emit_mac_control_frame(
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr::MAC_CONTROL,
        Some(tag),
        &pfc_3_4(),
        &mut out,
    );
    assert_eq!(out.len(), 64);
    let frame = Frame::parse(&out).expect("valid");
    assert_eq!(frame.header.vlan, Some(tag));
    assert_eq!(frame.payload, Payload::MacControl(pfc_3_4()));
}

#[test]
fn class_enable_high_byte_is_refused() {
    let mut f = hex(PFC_FRAME);
    f[16] = 0x01; // enbv 0x0118
    assert_eq!(
        Frame::parse(&f),
        Err(DecodeError::new(
            16,
            "macc.cbfc.enbv",
            K::BadValue {
                value: 0x0118,
                reason: "reserved high byte of the class-enable vector must be zero"
            }
        ))
    );
}

#[test]
fn short_pfc_is_refused() {
    // Opcode, vector and only seven timers: the eighth is cut.
    let payload = hex("0101 0018 0000 0000 0000 ffff ffff 0000 0000");
    assert_eq!(
        MacControl::parse(&payload),
        Err(DecodeError::new(
            18,
            "macc.cbfc.pause_time",
            K::Truncated {
                needed: 2,
                available: 0
            }
        ))
    );
    assert_eq!(
        MacControl::parse(&[0x00]),
        Err(DecodeError::new(
            0,
            "macc.opcode",
            K::Truncated {
                needed: 2,
                available: 1
            }
        ))
    );
}

#[test]
fn unknown_opcode_is_refused() {
    // 0x0002 is Multi-Point Control GATE: not ours.
    let e = MacControl::parse(&hex("0002 0000")).expect_err("not PAUSE/PFC");
    assert_eq!((e.offset, e.field), (0, "macc.opcode"));
    assert!(matches!(e.kind, K::BadValue { value: 2, .. }));
}

#[test]
fn padding_is_ignored() {
    let mut payload = hex("0001 0010");
    payload.extend_from_slice(&[0xaa; 42]);
    assert_eq!(
        MacControl::parse(&payload),
        Ok(MacControl::Pause { quanta: 16 })
    );
}
