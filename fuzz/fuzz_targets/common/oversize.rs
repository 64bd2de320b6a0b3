//! An LLDPDU longer than one frame's 1,500 octets ([`MAX_LLDPDU_LEN`]) is read (jumbo
//! peers send them) but never emitted: the check the LLDPDU, frame and IEEE DCBX
//! targets share.

use lossless_wire::lldp::MAX_LLDPDU_LEN;
use lossless_wire::{EmitError, Lldpdu};

/// Whether `pdu` is too long to emit; when it is, `emit` (emitting `pdu`, or a frame
/// carrying it) must be refused with [`EmitError::Length`] on field `lldpdu`.
pub fn refused(pdu: &Lldpdu, emit: impl FnOnce() -> Result<usize, EmitError>) -> bool {
    let len = pdu.buffer_len();
    if len <= MAX_LLDPDU_LEN {
        return false;
    }
    let emitted = emit();
    assert!(
        matches!(
            emitted,
            Err(EmitError::Length {
                field: "lldpdu",
                ..
            })
        ),
        "an LLDPDU of {len} octets was emitted: {emitted:?}"
    );
    true
}
