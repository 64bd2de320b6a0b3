//! draft-he-rtgwg-wan-pfc-00 section 3.2 (transparent PFC across a WAN): the destination DC
//! gateway must reserve, for the priority queue of its receiving port,
//!
//! ```text
//! buffer > (average receive rate - average send rate) * forwarding delay of the PFC frame
//! ```
//!
//! from the destination gateway back to the source gateway. It is a lower bound: the
//! link's own Delay Value comes on top, which also makes the inequality strict.

use serde::Serialize;

use crate::units::{Duration, Rate};

/// The WAN leg of a data-center-interconnect link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Wan {
    /// One-way forwarding delay of the PFC frame across the WAN.
    pub delay: Duration,
    /// Average receive rate of the priority at the receiving port (default: the line rate).
    pub rx_rate: Rate,
    /// Average send rate of the priority at the sending port (default: 0, everything stays).
    pub tx_rate: Rate,
}

/// `(rx - tx) x delay`, bits, rounded up; zero when the port drains as fast as it fills.
pub fn wan_bits(w: &Wan) -> u64 {
    let diff = w.rx_rate.0.saturating_sub(w.tx_rate.0);
    Duration(w.delay.0).bit_times(Rate(diff))
}

/// `rate x round trip`, bits, rounded up: what keeps arriving at a queue
/// from the moment it asks for a pause until the pause has taken effect and
/// the data in flight has landed (the PFC Delay Value Constraint Model's
/// two-way count of a link, here across the WAN), nothing assumed drained.
pub fn round_trip_bits(rate: Rate, round_trip: Duration) -> u64 {
    round_trip.bit_times(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_ms_at_100g_is_25_megabytes() {
        let w = Wan {
            delay: Duration(2_000_000_000),
            rx_rate: Rate(100_000_000_000),
            tx_rate: Rate(0),
        };
        assert_eq!(wan_bits(&w), 200_000_000);
        let w = Wan {
            tx_rate: Rate(60_000_000_000),
            ..w
        };
        assert_eq!(wan_bits(&w), 80_000_000);
        let w = Wan {
            tx_rate: Rate(200_000_000_000),
            ..w
        };
        assert_eq!(wan_bits(&w), 0);
        // A 4 ms round trip at 100 G: twice the draft's one way.
        assert_eq!(
            round_trip_bits(Rate(100_000_000_000), Duration(4_000_000_000)),
            400_000_000
        );
    }
}
