//! From a measured round trip to the headroom a port reserves, with hysteresis (Adaptive
//! PFC Headroom, phase 3): `X = speed x round trip`, `DV = X + 2 x MaxFrame + PFCFrame`,
//! `headroom = DV x alpha` rounded up to the cell.
//!
//! Under-provisioning drops frames, over-provisioning only wastes buffer, so the two
//! directions are treated differently: a larger need is applied at once; a smaller one
//! only when it is at least `shrink_threshold` below what is applied, `shrink_after`
//! measurements in a row. Jitter between rounds therefore never makes the headroom
//! flap, and a link that really got shorter (a re-cabled port) gives its buffer back
//! within a few periods. A speed change restarts from scratch ([`Sizer::reset`]).

use serde::Serialize;

use crate::adaptive::{adaptive_dv, adaptive_headroom, measured_bits};
use crate::cells::{Alpha, Headroom, DEFAULT_CELL};
use crate::dv::{DEFAULT_MAX_FRAME, DEFAULT_PFC_FRAME};
use crate::units::{Bytes, Duration, FrameSize, Rate};

/// How a port turns a measurement into headroom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SizingConfig {
    pub alpha: Alpha,
    pub cell: Bytes,
    /// The largest frame the peer may be sending when PFC arrives (the PFC Delay Value
    /// Constraint Model's MaxFrame).
    #[serde(skip)]
    pub max_frame: FrameSize,
    /// The PFC frame itself.
    #[serde(skip)]
    pub pfc_frame: FrameSize,
    /// Parts per million below the applied headroom a need must be to shrink it.
    pub shrink_threshold_ppm: u32,
    /// Consecutive measurements below the threshold before shrinking.
    pub shrink_after: u8,
}

impl Default for SizingConfig {
    fn default() -> Self {
        SizingConfig {
            alpha: Alpha::ONE,
            cell: DEFAULT_CELL,
            max_frame: DEFAULT_MAX_FRAME,
            pfc_frame: DEFAULT_PFC_FRAME,
            shrink_threshold_ppm: 100_000,
            shrink_after: 3,
        }
    }
}

/// One measurement's sizing, every term shown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Need {
    pub speed_bps: u64,
    pub round_trip_ps: u64,
    /// X = speed x round trip.
    pub x_bit_times: u64,
    pub max_frame_bit_times: u64,
    pub pfc_frame_bit_times: u64,
    /// DV = X + 2 x MaxFrame + PFCFrame.
    pub dv_bit_times: u64,
    pub headroom: Headroom,
}

/// What to do with a new need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Nothing applied yet: apply.
    Initial,
    /// The need grew: apply at once.
    Grow,
    /// The need stayed below the threshold long enough: apply the smaller headroom.
    Shrink,
    /// Within the hysteresis band, or not below it long enough yet: keep.
    Keep,
}

impl Decision {
    pub fn applies(self) -> bool {
        !matches!(self, Decision::Keep)
    }
}

/// The per-port hysteresis state.
#[derive(Debug, Clone, Default)]
pub struct Sizer {
    applied: Option<Headroom>,
    below: u8,
}

/// Adaptive PFC Headroom, phase 3, for one measurement.
pub fn need(cfg: &SizingConfig, round_trip: Duration, speed: Rate) -> Need {
    let x = measured_bits(round_trip, speed);
    let max_frame = cfg.max_frame.bit_times();
    let pfc_frame = cfg.pfc_frame.bit_times();
    let dv = adaptive_dv(x, max_frame, pfc_frame);
    Need {
        speed_bps: speed.0,
        round_trip_ps: round_trip.0,
        x_bit_times: x,
        max_frame_bit_times: max_frame,
        pfc_frame_bit_times: pfc_frame,
        dv_bit_times: dv,
        headroom: adaptive_headroom(dv, cfg.alpha, cfg.cell),
    }
}

impl Sizer {
    pub fn applied(&self) -> Option<&Headroom> {
        self.applied.as_ref()
    }

    /// Forget what is applied (speed change, link down): the next need applies as is.
    pub fn reset(&mut self) {
        *self = Sizer::default();
    }

    /// Feeds one need through the hysteresis; when the decision applies, the need's
    /// headroom becomes the applied one.
    pub fn update(&mut self, cfg: &SizingConfig, need: &Headroom) -> Decision {
        let Some(cur) = self.applied else {
            self.applied = Some(*need);
            return Decision::Initial;
        };
        if need.bytes > cur.bytes {
            self.applied = Some(*need);
            self.below = 0;
            return Decision::Grow;
        }
        let threshold = (u128::from(cur.bytes)
            * u128::from(1_000_000 - cfg.shrink_threshold_ppm.min(1_000_000)))
            / 1_000_000;
        if u128::from(need.bytes) <= threshold {
            self.below = self.below.saturating_add(1);
            if self.below >= cfg.shrink_after.max(1) {
                self.applied = Some(*need);
                self.below = 0;
                return Decision::Shrink;
            }
        } else {
            self.below = 0;
        }
        Decision::Keep
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rt_us(us: u64) -> Duration {
        Duration(us * 1_000_000)
    }

    #[test]
    fn adaptive_headroom_phase_3_terms() {
        let cfg = SizingConfig::default();
        // 100G, 11 us round trip: X = 1,100,000 bit times; DV adds 2 x 16,160 + 672.
        let n = need(&cfg, rt_us(11), Rate(100_000_000_000));
        assert_eq!(n.x_bit_times, 1_100_000);
        assert_eq!(n.dv_bit_times, 1_100_000 + 32_320 + 672);
        assert_eq!((n.headroom.cells, n.headroom.bytes), (886, 141_760));
    }

    #[test]
    fn grows_at_once_shrinks_only_after_a_run_below_the_band() {
        let cfg = SizingConfig::default();
        let speed = Rate(100_000_000_000);
        let h = |us| need(&cfg, rt_us(us), speed).headroom;
        let mut s = Sizer::default();
        assert_eq!(s.update(&cfg, &h(100)), Decision::Initial);
        // Jitter of a few percent either way: kept.
        assert_eq!(s.update(&cfg, &h(97)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(99)), Decision::Keep);
        assert_eq!(s.applied().unwrap().bytes, h(100).bytes);
        // Any growth applies at once.
        assert_eq!(s.update(&cfg, &h(101)), Decision::Grow);
        assert_eq!(s.applied().unwrap().bytes, h(101).bytes);
        // Far below: only the third in a row shrinks; an in-band one resets the count.
        assert_eq!(s.update(&cfg, &h(50)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(50)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(100)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(50)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(50)), Decision::Keep);
        assert_eq!(s.update(&cfg, &h(50)), Decision::Shrink);
        assert_eq!(s.applied().unwrap().bytes, h(50).bytes);
        s.reset();
        assert_eq!(s.update(&cfg, &h(10)), Decision::Initial);
    }
}
