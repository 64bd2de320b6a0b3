//! PFC frames as the host receives them: counted per priority from the packet socket
//! (which sees MAC Control: the shared MAC Control socket, or a port's own), whatever
//! their sender and the receive budget, at a few comparisons a frame.
//!
//! Where the driver reports no PFC counters (no `ieee_getpfc`, no PFC statistics in
//! ethtool: veth, many virtual and older NICs), these counts are the watchdog's source
//! ([`PfcSource::Host`]): the pause requests received per priority (XOFF: a PFC frame
//! with the priority's class-enable bit set and a non-zero pause time) as `rx_pause`.
//! What the host cannot see stays unseen: the pauses this NIC sends (`tx_pause`), and,
//! on a NIC that handles PFC in hardware and does not pass MAC Control frames up (most
//! NICs that run PFC do not), the pauses it receives too. Such a NIC usually has
//! counters; one that has neither shows no PFC frame here at all.

use lossless_dcbx::Instant;
use lossless_wire::mac_control::{ETHERTYPE_MAC_CONTROL, OPCODE_PAUSE, OPCODE_PFC};

use super::counters::{Counter, PfcSample, PfcSource};

/// What the host received of PFC and PAUSE on a port, since the port was added, and
/// whether it stands in for the driver's counters now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPfc {
    pub counts: HostCounts,
    /// While the watchdog reads these counts for want of the driver's: when the driver
    /// is asked again, and why it had none.
    pub standing_in: Option<(Instant, String)>,
}

pub use lossless_proto::pfc::HostCounts;

/// Counts `frame` in `c` if it is a MAC Control frame (untagged, as 802.3 sends
/// them); false otherwise.
pub fn count(c: &mut HostCounts, frame: &[u8]) -> bool {
    if frame.get(12..14) != Some(&ETHERTYPE_MAC_CONTROL.to_be_bytes()) {
        return false;
    }
    let word = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    match word(14) {
        Some(OPCODE_PFC) => {
            let (Some(enable), Some(_)) = (word(16), word(18 + 14)) else {
                c.malformed += 1;
                return true;
            };
            if enable & 0xff00 != 0 {
                c.malformed += 1;
                return true;
            }
            c.pfc_frames += 1;
            for p in 0..8 {
                if enable & (1 << p) == 0 {
                    continue;
                }
                let q = word(18 + 2 * p).unwrap_or(0);
                if q == 0 {
                    c.xon[p] += 1;
                } else {
                    c.xoff[p] += 1;
                    c.quanta[p] += u64::from(q);
                }
            }
        }
        Some(OPCODE_PAUSE) => match word(16) {
            Some(0) => c.pause_xon += 1,
            Some(_) => c.pause_xoff += 1,
            None => c.malformed += 1,
        },
        _ => c.malformed += 1,
    }
    true
}

/// The counts as a reading for the watchdog: `rx_pause` per priority (XOFF frames,
/// with the PAUSE frames that pause every priority), nothing else.
pub fn sample(c: &HostCounts) -> PfcSample {
    let mut s = PfcSample {
        source: PfcSource::Host,
        ..PfcSample::default()
    };
    for p in 0..8u8 {
        let v = c.xoff[usize::from(p)] + c.pause_xoff;
        s.set(Counter::RxPause, p, Some(v));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_wire::mac_control::MacControl;

    fn frame(mc: MacControl) -> Vec<u8> {
        let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 0xa, 0x88, 0x08];
        let at = f.len();
        f.resize(at + mc.buffer_len(), 0);
        mc.emit(&mut f[at..]);
        f
    }

    #[test]
    fn pfc_frames_are_counted_per_priority_xoff_and_xon() {
        let mut c = HostCounts::default();
        let mut quanta = [0u16; 8];
        quanta[3] = 0xffff;
        quanta[4] = 0;
        let xoff3_xon4 = frame(MacControl::Pfc {
            class_enable: 0b1_1000,
            quanta,
        });
        for _ in 0..5 {
            assert!(count(&mut c, &xoff3_xon4));
        }
        assert!(count(&mut c, &frame(MacControl::Pause { quanta: 10 })));
        assert!(count(&mut c, &frame(MacControl::Pause { quanta: 0 })));
        // Reserved byte set, cut short, another opcode: counted as malformed only.
        assert!(count(
            &mut c,
            &frame(MacControl::Pfc {
                class_enable: 0x100 | 0b1000,
                quanta,
            })
        ));
        assert!(count(&mut c, &xoff3_xon4[..20]));
        let mut other = xoff3_xon4.clone();
        other[15] = 2;
        assert!(count(&mut c, &other));
        // Not MAC Control.
        let mut lldp = xoff3_xon4.clone();
        lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
        assert!(!count(&mut c, &lldp));
        assert_eq!((c.xoff[3], c.xon[3], c.quanta[3]), (5, 0, 5 * 0xffff));
        assert_eq!((c.xoff[4], c.xon[4], c.quanta[4]), (0, 5, 0));
        assert_eq!((c.pause_xoff, c.pause_xon, c.malformed), (1, 1, 3));
        assert_eq!(c.pfc_frames, 5);
        let s = sample(&c);
        assert_eq!(s.source, PfcSource::Host);
        assert_eq!(s.get(Counter::RxPause, 3), Some(6));
        assert_eq!(s.get(Counter::RxPause, 0), Some(1));
        assert_eq!(
            s.get(Counter::TxPause, 3),
            None,
            "the host sees no pause it sends"
        );
    }
}
