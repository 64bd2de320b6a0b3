//! MAC Control frames (Ethertype 0x8808): 802.3x PAUSE (opcode 0x0001) and
//! Priority-based Flow Control (802.1Qbb / 802.3 Annex 31D, opcode 0x0101).

/// MAC Control Ethertype.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;
/// Opcode plus parameters are padded to this many bytes (minimum frame payload).
pub const MIN_PAYLOAD_LEN: usize = 46;

/// A MAC Control frame's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControl {
    /// 802.3x PAUSE: stop all traffic for `quanta` x 512 bit times.
    Pause { quanta: u16 },
    /// PFC: per priority n, when bit n of `class_enable` is set, pause it for
    /// `quanta[n]` x 512 bit times (0 = resume). The vector's high byte is
    /// reserved and must be zero.
    Pfc { class_enable: u16, quanta: [u16; 8] },
}
