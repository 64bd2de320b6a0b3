//! From bits to buffer: headroom is allocated in cells (chunks), not bytes, so a DV of
//! 19,133 bytes takes 120 cells of 160 bytes (Adaptive PFC Headroom: "buffer to store the
//! packet is usually allocated chunk by chunk ... e.g. 160 bytes"). `alpha` scales the need
//! before rounding, for cell fragmentation and safety margin (Adaptive PFC Headroom's
//! `Headroom = DV * alpha`).
//! Given a per-priority buffer, the xoff threshold is what is left when the headroom is set
//! aside; xon sits below xoff by a gap so PFC does not flap.

use serde::Serialize;

use crate::units::Bytes;

/// Adaptive PFC Headroom's example chunk size.
pub const DEFAULT_CELL: Bytes = Bytes(160);

/// A multiplier in parts per million (`1.0` = 1,000,000), so alpha stays exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Alpha(pub u64);

impl Alpha {
    pub const ONE: Alpha = Alpha(1_000_000);

    /// `1`, `1.25`, `1.333333` (at most six decimals). Below 1 would reserve less than the
    /// delay value, which loses frames, so it is refused.
    pub fn parse(input: &str) -> Result<Alpha, crate::units::UnitError> {
        const EXPECTED: &str =
            "a factor of at least 1, such as 1, 1.25 or 1.5 (six decimals at most)";
        let bad = |reason: &str| crate::units::UnitError {
            input: input.to_owned(),
            reason: reason.to_owned(),
            expected: EXPECTED,
        };
        let s = input.trim();
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(bad("not a decimal number"));
        }
        if frac.len() > 6 || int.len() > 6 {
            return Err(bad("too many digits"));
        }
        let int: u64 = int.parse().map_err(|_| bad("not a decimal number"))?;
        let frac_val: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse::<u64>()
                .map_err(|_| bad("not a decimal number"))?
                * 10u64.pow(6 - frac.len() as u32)
        };
        let a = Alpha(int * 1_000_000 + frac_val);
        if a < Alpha::ONE {
            return Err(bad(
                "below 1: the headroom would be smaller than the delay value",
            ));
        }
        Ok(a)
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

/// Reserved headroom for one priority of one port.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Headroom {
    /// Bits to absorb (DV, plus the WAN term if any).
    pub bit_times: u64,
    /// The same in bytes, rounded up, before alpha.
    pub need_bytes: u64,
    pub alpha: f64,
    pub cell_bytes: u64,
    pub cells: u64,
    /// cells x cell size: what to reserve.
    pub bytes: u64,
}

/// `ceil(ceil(bits / 8) * alpha / cell)` cells.
pub fn headroom(bit_times: u64, alpha: Alpha, cell: Bytes) -> Headroom {
    let need = bit_times.div_ceil(8);
    let scaled = (need as u128 * alpha.0 as u128).div_ceil(1_000_000);
    let cell_bytes = cell.0.max(1);
    let cells = u64::try_from(scaled.div_ceil(cell_bytes as u128)).unwrap_or(u64::MAX);
    Headroom {
        bit_times,
        need_bytes: need,
        alpha: alpha.as_f64(),
        cell_bytes,
        cells,
        bytes: cells.saturating_mul(cell_bytes),
    }
}

/// PFC thresholds for a per-priority buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    pub buffer_bytes: u64,
    /// Send PFC XOFF when the queue reaches this: the rest of the buffer is the headroom.
    pub xoff_bytes: u64,
    /// Send XON when the queue drains to this.
    pub xon_bytes: u64,
    pub xon_gap_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{buffer} B is smaller than the headroom, {headroom} B: no room left below xoff")]
pub struct BufferTooSmall {
    pub buffer: u64,
    pub headroom: u64,
}

/// xoff = buffer - headroom; xon = xoff - gap (not below zero). The gap defaults to two
/// maximum frames (assumption: enough that one frame drained does not toggle PFC).
pub fn thresholds(
    buffer: Bytes,
    headroom: &Headroom,
    xon_gap: Bytes,
) -> Result<Thresholds, BufferTooSmall> {
    if buffer.0 <= headroom.bytes {
        return Err(BufferTooSmall {
            buffer: buffer.0,
            headroom: headroom.bytes,
        });
    }
    let xoff = buffer.0 - headroom.bytes;
    // Thresholds are counted in cells too.
    let xoff = xoff - xoff % headroom.cell_bytes;
    Ok(Thresholds {
        buffer_bytes: buffer.0,
        xoff_bytes: xoff,
        xon_bytes: xoff.saturating_sub(xon_gap.0),
        xon_gap_bytes: xon_gap.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dv_model_example_in_160_byte_cells() {
        // 153,064 bit times = 19,133 bytes = 119.58 cells -> 120 cells, 19,200 bytes.
        let h = headroom(153_064, Alpha::ONE, DEFAULT_CELL);
        assert_eq!((h.need_bytes, h.cells, h.bytes), (19_133, 120, 19_200));
        let h = headroom(153_064, Alpha(1_250_000), Bytes(256));
        // 19,133 * 1.25 = 23,916.25 -> 23,917 -> 94 cells of 256
        assert_eq!((h.cells, h.bytes), (94, 24_064));
    }

    #[test]
    fn thresholds_leave_the_headroom_above_xoff() {
        let h = headroom(153_064, Alpha::ONE, DEFAULT_CELL);
        let t = thresholds(Bytes(100_000), &h, Bytes(4_040)).expect("fits");
        assert_eq!(t.xoff_bytes, 80_800);
        assert!(t.xoff_bytes + h.bytes <= 100_000);
        assert_eq!(t.xon_bytes, 80_800 - 4_040);
        assert!(thresholds(Bytes(19_200), &h, Bytes(0)).is_err());
    }

    #[test]
    fn alpha_parse() {
        assert_eq!(Alpha::parse("1"), Ok(Alpha::ONE));
        assert_eq!(Alpha::parse("1.25"), Ok(Alpha(1_250_000)));
        assert!(Alpha::parse("0.9").is_err());
        assert!(Alpha::parse("x").is_err());
        assert!(Alpha::parse("1.0000001").is_err());
    }
}
