//! The DCB buffer sized for the headroom: the plan (which buffers to grow, within the
//! port's total) and what became of it (see the module documentation of
//! [`super`], "The DCB buffer").

use crate::hardware::{DcbBuffer, MAX_BUFFERS};

/// Why the driver's buffer is left alone when it exposes none.
pub const NO_BUFFER: &str = "driver exposes no DCB buffer: no DCB_ATTR_DCB_BUFFER in IEEE_GET";

pub use lossless_proto::headroom::BufferState;

/// What to do with the driver's buffer, for one headroom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferPlan {
    /// Write this.
    Write(DcbBuffer),
    /// The buffers already hold what is wanted.
    Enough,
    /// No PFC-enabled priority.
    NoPfcPriority,
    /// The buffers would need `need` bytes of the port's `total`.
    DoesNotFit { need: u64, total: u32 },
}

/// The buffer sizes for `headroom` bytes per lossless buffer: each buffer holding a
/// priority of `pfc_enabled` gets `max(floor, headroom)`, the others keep their size,
/// `prio2buffer` is kept; the sum must fit `total_size` (0: the driver gives no total,
/// and the check is left to it).
pub fn plan_buffer(
    current: &DcbBuffer,
    floor: &[u32; MAX_BUFFERS],
    pfc_enabled: u8,
    headroom: u64,
) -> BufferPlan {
    let lossless = current.buffers_of(pfc_enabled);
    if lossless == 0 {
        return BufferPlan::NoPfcPriority;
    }
    let mut want = *current;
    let mut need: u64 = 0;
    for (b, size) in want.buffer_size.iter_mut().enumerate() {
        let wanted = if lossless & (1 << b) != 0 {
            headroom.max(u64::from(floor[b]))
        } else {
            u64::from(*size)
        };
        need = need.saturating_add(wanted);
        *size = u32::try_from(wanted).unwrap_or(u32::MAX);
    }
    let too_big = headroom > u64::from(u32::MAX);
    if too_big || (current.total_size != 0 && need > u64::from(current.total_size)) {
        return BufferPlan::DoesNotFit {
            need,
            total: current.total_size,
        };
    }
    if want == *current {
        BufferPlan::Enough
    } else {
        BufferPlan::Write(want)
    }
}

/// The buffer indices in a mask, ascending.
pub(super) fn indices(mask: u8) -> Vec<u8> {
    (0..8).filter(|b| mask & (1 << b) != 0).collect()
}

pub(super) fn sized(
    headroom: u64,
    pfc_enabled: u8,
    b: &DcbBuffer,
    floor: [u32; MAX_BUFFERS],
    written: bool,
) -> BufferState {
    BufferState::Sized {
        headroom_bytes: headroom,
        lossless: indices(b.buffers_of(pfc_enabled)),
        prio2buffer: b.prio2buffer,
        buffer_size: b.buffer_size,
        total_size: b.total_size,
        floor,
        written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Priorities 3 and 4 (PFC) in buffer 1, the rest in buffer 0; a 1 MiB port.
    const DRIVER: DcbBuffer = DcbBuffer {
        prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
        buffer_size: [262_144, 65_536, 0, 0, 0, 0, 0, 0],
        total_size: 1_048_576,
    };
    const PFC_3_4: u8 = 0b0001_1000;

    #[test]
    fn plan_grows_the_buffers_of_pfc_priorities_only() {
        let floor = DRIVER.buffer_size;
        let BufferPlan::Write(w) = plan_buffer(&DRIVER, &floor, PFC_3_4, 141_760) else {
            panic!("a 64 KiB lossless buffer is below 141,760 bytes")
        };
        assert_eq!(w.prio2buffer, DRIVER.prio2buffer);
        assert_eq!(w.buffer_size, [262_144, 141_760, 0, 0, 0, 0, 0, 0]);
        assert_eq!(w.total_size, DRIVER.total_size);
        // Never below the floor: a smaller headroom leaves the buffer as it was.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 1_000),
            BufferPlan::Enough
        );
        // PFC on priority 0 too: buffer 0 holds lossless traffic as well.
        let BufferPlan::Write(w) = plan_buffer(&DRIVER, &floor, 0b1001_1001, 300_000) else {
            panic!()
        };
        assert_eq!(w.buffer_size, [300_000, 300_000, 0, 0, 0, 0, 0, 0]);
        // No PFC priority, nothing to size.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, 0, 141_760),
            BufferPlan::NoPfcPriority
        );
        // The total counts the buffers left alone.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 800_000),
            BufferPlan::DoesNotFit {
                need: 262_144 + 800_000,
                total: 1_048_576
            }
        );
        assert!(matches!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 786_432),
            BufferPlan::Write(_)
        ));
        // A driver that reports no total leaves the check to itself.
        let no_total = DcbBuffer {
            total_size: 0,
            ..DRIVER
        };
        assert!(matches!(
            plan_buffer(&no_total, &floor, PFC_3_4, 800_000),
            BufferPlan::Write(_)
        ));
        assert!(matches!(
            plan_buffer(&no_total, &floor, PFC_3_4, 1 << 33),
            BufferPlan::DoesNotFit { .. }
        ));
    }
}
