//! The transmission medium and the cable delay it adds (PFC Delay Value Constraint Model,
//! section 5): `CD = MediaLength / (BT * v)`, the bits in flight on the cable, where `v` is
//! the signal velocity as a fraction of `c`. The model takes `c` as 300,000,000 m/s; so do
//! we, which is what makes its 100 m of Cat 6 at 0.60c come out at exactly 5,556 bit times.

use std::fmt;

use serde::Serialize;

use crate::source::Source;
use crate::units::{Length, Rate, UnitError};

/// Speed of light in free space as the PFC Delay Value Constraint Model (section 5) writes
/// it, metres per second.
pub const C_M_PER_S: u128 = 300_000_000;

/// A medium: a name and a velocity `num/den` of `c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Medium {
    pub name: &'static str,
    /// Velocity factor numerator (of `c`).
    pub num: u64,
    /// Velocity factor denominator.
    pub den: u64,
    #[serde(skip)]
    pub source: Source,
}

/// Cat 6 worst case: 555 ns per 100 m (EIA-568-B), which the PFC Delay Value Constraint
/// Model (section 7) writes as 0.60c.
pub const CAT6: Medium = Medium {
    name: "cat6",
    num: 3,
    den: 5,
    source: Source::document(
        "PFC Delay Value Constraint Model s7: Cat 6 worst case 555 ns/100 m, 0.60c",
    ),
};

/// Fibre: 5 ns/m = 2/3 c; Adaptive PFC Headroom's delay table gives 10 m at 100G as 5,000
/// bit times and 10 km as 5,000,000. The source names the velocity, not a length, so
/// `--explain` on a 2 km link does not cite a 10 m row.
pub const FIBER: Medium = Medium {
    name: "fiber",
    num: 2,
    den: 3,
    source: Source::document(
        "Adaptive PFC Headroom, delay table: fibre at 5 ns/m (2/3 c), as its 100G cable \
         delays give",
    ),
};

/// Twinax (DAC): about 4.8 ns/m = 25/36 c. Neither the PFC Delay Value Constraint Model nor
/// Adaptive PFC Headroom gives a figure.
pub const TWINAX: Medium = Medium {
    name: "twinax",
    num: 25,
    den: 36,
    source: Source::assumption(
        "twinax/DAC about 4.8 ns/m (25/36 c); neither the PFC Delay Value Constraint Model nor \
         Adaptive PFC Headroom gives a figure",
    ),
};

impl Medium {
    /// Bit times in flight on `length` of this medium at `rate`, rounded up:
    /// `length * rate / (v * c)`.
    pub fn cable_bits(&self, length: Length, rate: Rate) -> u64 {
        // length is in um: bits = L_um * 1e-6 * R * den / (num * c)
        // The numerator saturates: a slow enough medium (a velocity of 0.0002c is text the
        // parser takes) over a long enough cable has more bits in flight than u128 holds.
        // The denominator cannot overflow (u64 x 3e14 < 2^128).
        let numer = (length.0 as u128 * rate.0 as u128).checked_mul(self.den as u128);
        let denom = self.num as u128 * C_M_PER_S * 1_000_000;
        match numer {
            Some(n) if denom > 0 => u64::try_from(n.div_ceil(denom)).unwrap_or(u64::MAX),
            _ => u64::MAX,
        }
    }

    /// Nanoseconds per metre, for explanations.
    pub fn ns_per_m(&self) -> f64 {
        1e9 * self.den as f64 / (self.num as f64 * C_M_PER_S as f64)
    }

    /// Velocity as a fraction of c, for explanations.
    pub fn velocity(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for Medium {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:.3}c, {:.3} ns/m)",
            self.name,
            self.velocity(),
            self.ns_per_m()
        )
    }
}

const EXPECTED: &str =
    "fiber, copper, twinax, cat6, a velocity such as 0.6c, or a delay such as 5ns/m";

/// `fiber`/`fibre`, `copper`/`twinax`/`dac`, `cat6`, `0.6c` (a fraction of c, at most 1),
/// or `5ns/m` (at least 3.334 ns/m, light in vacuum at the PFC
/// Delay Value Constraint Model's c).
pub fn parse_medium(input: &str) -> Result<Medium, UnitError> {
    let s = input.trim();
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "fiber" | "fibre" | "smf" | "mmf" => return Ok(FIBER),
        "copper" | "twinax" | "dac" => {
            return Ok(Medium {
                name: if lower == "copper" {
                    "copper"
                } else {
                    "twinax"
                },
                ..TWINAX
            })
        }
        "cat6" | "cat6a" | "cat5e" | "utp" => return Ok(CAT6),
        _ => {}
    }
    let bad = |reason: String| UnitError {
        input: input.to_owned(),
        reason,
        expected: EXPECTED,
    };
    let (number, per) = if let Some(n) = lower.strip_suffix('c') {
        (n, false)
    } else if let Some(n) = lower.strip_suffix("ns/m") {
        (n, true)
    } else {
        return Err(bad("unknown medium".into()));
    };
    let number = number.trim();
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || int.len() + frac.len() > 12
    {
        return Err(bad(format!("{number:?} is not a decimal number")));
    }
    let mut mantissa: u64 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + u64::from(b - b'0');
    }
    let pow = 10u64.pow(frac.len() as u32);
    if mantissa == 0 {
        return Err(bad("zero".into()));
    }
    let (num, den) = if per {
        // x ns/m: v = 1e9/x m/s = (1e9 / x) / 3e8 c = 10 / (3x) c, x = mantissa/pow
        (10 * pow, 3 * mantissa)
    } else {
        (mantissa, pow)
    };
    if num > den {
        return Err(bad("faster than light in vacuum".into()));
    }
    Ok(Medium {
        name: "velocity",
        num,
        den,
        source: Source::user(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{parse_length, parse_rate};

    fn bits(medium: &str, length: &str, rate: &str) -> u64 {
        let m = parse_medium(medium).expect("medium");
        m.cable_bits(
            parse_length(length).expect("length"),
            parse_rate(rate).expect("rate"),
        )
    }

    /// Found by the `headroom_units` fuzz target: the product overflowed u128.
    #[test]
    fn a_slow_medium_over_the_longest_cable_saturates() {
        let m = parse_medium(".00020002c").expect("medium");
        assert_eq!((m.num, m.den), (20_002, 100_000_000));
        let rate = parse_rate("800G").expect("rate");
        assert_eq!(m.cable_bits(Length(u64::MAX), rate), u64::MAX);
        // Still exact where it fits: 1 m at 10G over 0.5c is 66.7 bit times.
        let half = parse_medium("0.5c").expect("medium");
        assert_eq!(
            half.cable_bits(Length(1_000_000), parse_rate("10G").expect("rate")),
            67
        );
    }

    #[test]
    fn dv_model_cat6_100m_at_10g_is_5556_bit_times() {
        assert_eq!(bits("cat6", "100m", "10G"), 5_556);
        assert_eq!(bits("0.6c", "100m", "10G"), 5_556);
    }

    #[test]
    fn adaptive_headroom_fiber_table() {
        // Adaptive PFC Headroom: 100G Base-R, 10 m = 5,000 bit times, 10 km = 5,000,000.
        assert_eq!(bits("fiber", "10m", "100G"), 5_000);
        assert_eq!(bits("fiber", "10km", "100G"), 5_000_000);
        assert_eq!(bits("5ns/m", "10km", "100G"), 5_000_000);
    }

    #[test]
    fn twinax_and_errors() {
        // 4.8 ns/m, 5 m at 100G = 24 ns = 2,400 bit times.
        assert_eq!(bits("twinax", "5m", "100G"), 2_400);
        assert_eq!(bits("copper", "5m", "100G"), 2_400);
        assert!(parse_medium("1.2c")
            .expect_err("must fail")
            .reason
            .contains("faster"));
        assert!(parse_medium("3ns/m")
            .expect_err("must fail")
            .reason
            .contains("faster"));
        assert_eq!(
            parse_medium("air").expect_err("must fail").reason,
            "unknown medium"
        );
        assert!(parse_medium("xc").is_err());
        assert!(parse_medium("0c").is_err());
    }
}
