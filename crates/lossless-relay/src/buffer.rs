//! The buffer condition of draft-he-rtgwg-wan-pfc-00 at the destination DC
//! gateway, computed by the headroom model ([`lossless_headroom::wan`]) rather than again here:
//!
//! "The buffer size of the priority queue reserved for the receiving port >
//! (the average receiving rate of the corresponding priority flow at the
//! receiving port - the average sending rate of the corresponding priority
//! flow at the sending port) * the forwarding delay of the PFC frame from the
//! destination DC gateway to the source DC gateway."
//!
//! It is a lower bound: the link's own Delay Value comes on top of it.
//!
//! Beside it, the physically safe bound: once the gateway's queue passes its
//! threshold, data keeps arriving for a whole round trip (the PFC frame's
//! way to the sender, and the data already in flight on the way back), at
//! the receive rate with nothing assumed drained, as the PFC Delay Value
//! Constraint Model counts a link (both directions of the cable). The draft's
//! condition counts one way and the rate difference, so it is always below.

use lossless_headroom::units::{Bytes, Duration, Rate};
use lossless_headroom::wan::{round_trip_bits, wan_bits, Wan};
use serde::{Deserialize, Serialize};

/// The condition evaluated for one priority queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayBuffer {
    /// The one-way forwarding delay used, in the headroom calculator's notation.
    pub wan_delay: String,
    /// `configured`, or `measured` by the PEs inside the tunnel.
    #[serde(default)]
    pub delay_source: String,
    pub rx_rate: String,
    pub tx_rate: String,
    /// `(rx - tx) x delay`, bits, rounded up.
    pub product_bits: u64,
    /// The least whole number of bytes that is strictly more than
    /// `product_bits`.
    pub minimum_bytes: u64,
    /// The reservation checked, if one was given.
    pub reserved_bytes: Option<u64>,
    /// Whether `reserved_bytes` meets the condition.
    pub holds: Option<bool>,
    /// The round trip the safe bound counts: measured, or twice the
    /// configured one-way delay.
    #[serde(default)]
    pub round_trip: String,
    /// `rx x round trip`, bits, rounded up: the physically safe bound.
    #[serde(default)]
    pub safe_bits: u64,
    /// The least whole number of bytes strictly above `safe_bits`.
    #[serde(default)]
    pub safe_minimum_bytes: u64,
    /// Whether `reserved_bytes` meets the safe bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_holds: Option<bool>,
}

impl GatewayBuffer {
    /// The condition for a configured one-way delay (the round trip taken as
    /// twice it).
    pub fn evaluate(wan: &Wan, reserved: Option<Bytes>) -> GatewayBuffer {
        let rtt = Duration(wan.delay.0.saturating_mul(2));
        GatewayBuffer::evaluate_with(wan, rtt, "configured", reserved)
    }

    /// The condition for a one-way delay (in `wan`) and a round trip from
    /// `source`.
    pub fn evaluate_with(
        wan: &Wan,
        round_trip: Duration,
        source: &str,
        reserved: Option<Bytes>,
    ) -> GatewayBuffer {
        let product_bits = wan_bits(wan);
        let safe_bits = round_trip_bits(wan.rx_rate, round_trip);
        GatewayBuffer {
            wan_delay: Duration(wan.delay.0).to_string(),
            delay_source: source.to_string(),
            rx_rate: Rate(wan.rx_rate.0).to_string(),
            tx_rate: Rate(wan.tx_rate.0).to_string(),
            product_bits,
            minimum_bytes: minimum_bytes(product_bits),
            reserved_bytes: reserved.map(|b| b.0),
            holds: reserved.map(|b| holds(b, product_bits)),
            round_trip: round_trip.to_string(),
            safe_bits,
            safe_minimum_bytes: minimum_bytes(safe_bits),
            safe_holds: reserved.map(|b| holds(b, safe_bits)),
        }
    }
}

/// The smallest buffer, in bytes, with more than `bits` bits.
pub fn minimum_bytes(bits: u64) -> u64 {
    bits / 8 + 1
}

/// Whether `reserved` is strictly more than `bits` bits.
pub fn holds(reserved: Bytes, bits: u64) -> bool {
    u128::from(reserved.0) * 8 > u128::from(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 ms at 100 Gb/s with nothing draining: 200 Mbit = 25 MB, which is not
    /// enough (the condition is strict); 25 MB + 1 byte is.
    #[test]
    fn two_ms_at_100g() {
        let wan = Wan {
            delay: Duration(2_000_000_000),
            rx_rate: Rate(100_000_000_000),
            tx_rate: Rate(0),
        };
        let at_bound = GatewayBuffer::evaluate(&wan, Some(Bytes(25_000_000)));
        assert_eq!(at_bound.product_bits, 200_000_000);
        assert_eq!(at_bound.minimum_bytes, 25_000_001);
        assert_eq!(at_bound.holds, Some(false));
        assert_eq!(at_bound.wan_delay, "2ms");
        assert_eq!(at_bound.rx_rate, "100G");
        let above = GatewayBuffer::evaluate(&wan, Some(Bytes(25_000_001)));
        assert_eq!(above.holds, Some(true));
        // Draining at 60 G leaves 40 G x 2 ms = 10 MB.
        let draining = Wan {
            tx_rate: Rate(60_000_000_000),
            ..wan
        };
        // The safe bound counts a round trip at the full rate: 4 ms x 100 G.
        assert_eq!(above.safe_bits, 400_000_000);
        assert_eq!(above.safe_minimum_bytes, 50_000_001);
        assert_eq!(above.safe_holds, Some(false));
        assert_eq!(
            (above.round_trip.as_str(), above.delay_source.as_str()),
            ("4ms", "configured")
        );
        let d = GatewayBuffer::evaluate(&draining, None);
        assert_eq!(d.product_bits, 80_000_000);
        assert_eq!(d.minimum_bytes, 10_000_001);
        assert_eq!(d.holds, None);
    }

    #[test]
    fn a_port_that_drains_faster_needs_only_a_byte() {
        let wan = Wan {
            delay: Duration(2_000_000_000),
            rx_rate: Rate(10_000_000_000),
            tx_rate: Rate(40_000_000_000),
        };
        let b = GatewayBuffer::evaluate(&wan, Some(Bytes(0)));
        assert_eq!(b.product_bits, 0);
        assert_eq!(b.minimum_bytes, 1);
        assert_eq!(b.holds, Some(false));
    }
}
