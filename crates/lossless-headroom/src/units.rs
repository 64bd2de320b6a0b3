//! Quantities as operators type them (`100m`, `10km`, `5us`, `100G`, `9216B`, `74q`) and
//! back. Every quantity is an integer in its finest unit, so parsing and formatting are
//! exact and round-trip: a length is micrometres, a duration picoseconds, a rate bits per
//! second, a size bytes. Anything finer than that step is refused rather than rounded,
//! because a silently rounded input is a silently wrong headroom.

use std::fmt;

use serde::Serialize;

/// Bit times in one pause quantum (802.3 clause 31B: pause_quanta are 512 bit times).
pub const BITS_PER_QUANTUM: u64 = 512;

/// A value that did not parse: the input, why, and what would have been accepted.
/// The CLI prefixes it with the flag's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?}: {reason}; expected {expected}")]
pub struct UnitError {
    pub input: String,
    pub reason: String,
    pub expected: &'static str,
}

/// A length, in micrometres.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Length(pub u64);

/// A duration, in picoseconds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize, Default,
)]
pub struct Duration(pub u64);

/// A line rate, in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rate(pub u64);

/// A buffer size, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Bytes(pub u64);

/// A delay as given: bit times (also from pause quanta) or a time that becomes bit times
/// once the line rate is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delay {
    Bits(u64),
    Time(Duration),
}

/// A frame size as given: octets of the frame (preamble, SFD and inter-packet gap are
/// added, as the PFC Delay Value Constraint Model does: 2000 octets = 16,160 bit times) or bit
/// times taken as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSize {
    Octets(u64),
    Bits(u64),
}

/// Preamble + SFD (8 octets) and the minimum inter-packet gap (12 octets) a frame costs on
/// the wire: the PFC Delay Value Constraint Model counts 2000 octets as 16,160 bit times and
/// 64 octets as 672.
pub const WIRE_OVERHEAD_OCTETS: u64 = 20;

impl FrameSize {
    /// Bit times on the wire.
    pub fn bit_times(self) -> u64 {
        match self {
            FrameSize::Octets(n) => n.saturating_add(WIRE_OVERHEAD_OCTETS).saturating_mul(8),
            FrameSize::Bits(b) => b,
        }
    }
}

impl Duration {
    /// Bit times this duration lasts at `rate`, rounded up (a partial bit still needs room).
    pub fn bit_times(self, rate: Rate) -> u64 {
        let bits = (self.0 as u128 * rate.0 as u128).div_ceil(1_000_000_000_000);
        u64::try_from(bits).unwrap_or(u64::MAX)
    }
}

const LENGTH: &str = "a length such as 100m, 2.5km, 30cm or 500mm";
const DURATION: &str = "a duration such as 500ns, 5us, 1.5ms or 2s";
const RATE: &str = "a line rate such as 10G, 2.5G, 400G or 100Gb/s";
const SIZE: &str = "a size in bytes such as 9216, 9216B, 32KiB or 12MB";
const DELAY: &str = "bit times (37888 or 37888bt), pause quanta (74q) or a time (1.5us)";
const FRAME: &str =
    "octets of the frame (2000 or 2000B; preamble and gap are added) or bit times (16160bt)";

/// A decimal number as typed: `mantissa / 10^frac_digits`.
struct Decimal {
    mantissa: u128,
    frac_digits: u32,
}

fn err(input: &str, reason: impl Into<String>, expected: &'static str) -> UnitError {
    UnitError {
        input: input.to_owned(),
        reason: reason.into(),
        expected,
    }
}

/// Splits `12.5km` into the number and the unit (`km`); a space between is allowed.
fn split<'a>(input: &'a str, expected: &'static str) -> Result<(Decimal, &'a str), UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(err(input, "empty", expected));
    }
    if s.starts_with('-') {
        return Err(err(input, "negative", expected));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if !num.bytes().any(|b| b.is_ascii_digit()) {
        return Err(err(input, "no number", expected));
    }
    let mut parts = num.splitn(3, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    if parts.next().is_some() {
        return Err(err(input, "more than one decimal point", expected));
    }
    let digits = int.len() + frac.len();
    if digits > 30 {
        return Err(err(input, "too many digits", expected));
    }
    let mut mantissa: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + u128::from(b - b'0');
    }
    let dec = Decimal {
        mantissa,
        frac_digits: frac.len() as u32,
    };
    Ok((dec, unit.trim_start()))
}

/// `dec * factor`, which must be a whole number of base units and fit in a u64.
fn scale(
    input: &str,
    dec: &Decimal,
    factor: u128,
    step: &str,
    expected: &'static str,
) -> Result<u64, UnitError> {
    let div = 10u128.pow(dec.frac_digits);
    let product = dec
        .mantissa
        .checked_mul(factor)
        .ok_or_else(|| err(input, "too large", expected))?;
    if product % div != 0 {
        return Err(err(
            input,
            format!("finer than the smallest step, {step}"),
            expected,
        ));
    }
    u64::try_from(product / div).map_err(|_| err(input, "too large", expected))
}

fn unknown_unit(input: &str, unit: &str, expected: &'static str) -> UnitError {
    if unit.is_empty() {
        err(input, "no unit", expected)
    } else {
        err(input, format!("unknown unit {unit:?}"), expected)
    }
}

/// Lengths: `um`, `mm`, `cm`, `m`, `km`. A unit is required: `--cable 100` could be
/// metres or feet, and guessing wrong sizes the buffer wrong.
pub fn parse_length(input: &str) -> Result<Length, UnitError> {
    let (dec, unit) = split(input, LENGTH)?;
    let factor = match unit {
        "um" | "µm" => 1,
        "mm" => 1_000,
        "cm" => 10_000,
        "m" => 1_000_000,
        "km" => 1_000_000_000,
        "ft" | "mi" | "in" => {
            return Err(err(input, format!("{unit:?}: use metric units"), LENGTH))
        }
        _ => return Err(unknown_unit(input, unit, LENGTH)),
    };
    scale(input, &dec, factor, "1um", LENGTH).map(Length)
}

/// Durations: `ps`, `ns`, `us` (or `µs`), `ms`, `s`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let (dec, unit) = split(input, DURATION)?;
    let factor = duration_factor(unit).ok_or_else(|| unknown_unit(input, unit, DURATION))?;
    scale(input, &dec, factor, "1ps", DURATION).map(Duration)
}

fn duration_factor(unit: &str) -> Option<u128> {
    Some(match unit {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Rates: `10G`, `2.5G`, `100Gb/s`, `100Gbps`, `800M`, `1T`, `1000000bps`.
pub fn parse_rate(input: &str) -> Result<Rate, UnitError> {
    let (dec, unit) = split(input, RATE)?;
    let prefix = unit
        .strip_suffix("b/s")
        .or_else(|| unit.strip_suffix("bps"))
        .or_else(|| unit.strip_suffix("bit/s"))
        .unwrap_or(unit);
    let factor: u128 = match prefix {
        "" if prefix.len() < unit.len() => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        "t" | "T" => 1_000_000_000_000,
        "GB/s" | "MB/s" | "Gbyte/s" => {
            return Err(err(input, "bytes per second: give bits (100G)", RATE))
        }
        _ => return Err(unknown_unit(input, unit, RATE)),
    };
    scale(input, &dec, factor, "1b/s", RATE).map(Rate)
}

/// Sizes in bytes: bare, `B`, `KB`/`kB` (1000), `KiB` (1024), `MB`, `MiB`, `GB`, `GiB`.
pub fn parse_bytes(input: &str) -> Result<Bytes, UnitError> {
    let (dec, unit) = split(input, SIZE)?;
    let factor = bytes_factor(unit).map_err(|reason| match reason {
        Some(r) => err(input, r, SIZE),
        None => unknown_unit(input, unit, SIZE),
    })?;
    scale(input, &dec, factor, "1B", SIZE).map(Bytes)
}

fn bytes_factor(unit: &str) -> Result<u128, Option<&'static str>> {
    Ok(match unit {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "KiB" => 1_024,
        "MB" => 1_000_000,
        "MiB" => 1_048_576,
        "GB" => 1_000_000_000,
        "GiB" => 1_073_741_824,
        "b" | "kb" | "Kb" | "Mb" | "Gb" => {
            return Err(Some(
                "a lowercase b means bits; sizes are bytes (B, KB, KiB)",
            ))
        }
        _ => return Err(None),
    })
}

/// Delays: bare or `bt`/`bits` are bit times, `q`/`pq`/`quanta` are pause quanta (512 bit
/// times; the PFC Delay Value Constraint Model's tables give both), a time unit is converted at the
/// line rate.
pub fn parse_delay(input: &str) -> Result<Delay, UnitError> {
    let (dec, unit) = split(input, DELAY)?;
    match unit {
        "" | "bt" | "bit" | "bits" => scale(input, &dec, 1, "1 bit time", DELAY).map(Delay::Bits),
        "q" | "pq" | "quanta" | "quantum" => scale(
            input,
            &dec,
            BITS_PER_QUANTUM as u128,
            "1 bit time (1/512 quantum)",
            DELAY,
        )
        .map(Delay::Bits),
        _ => match duration_factor(unit) {
            Some(f) => scale(input, &dec, f, "1ps", DELAY).map(|ps| Delay::Time(Duration(ps))),
            None => Err(unknown_unit(input, unit, DELAY)),
        },
    }
}

/// Frame sizes: octets (bare or `B`) or bit times (`bt`).
pub fn parse_frame(input: &str) -> Result<FrameSize, UnitError> {
    let (dec, unit) = split(input, FRAME)?;
    match unit {
        "" | "B" => scale(input, &dec, 1, "1 octet", FRAME).map(FrameSize::Octets),
        "bt" | "bit" | "bits" => scale(input, &dec, 1, "1 bit time", FRAME).map(FrameSize::Bits),
        _ => Err(unknown_unit(input, unit, FRAME)),
    }
}

/// Writes `value / scale` with the fraction trimmed, then the unit.
fn write_scaled(f: &mut fmt::Formatter<'_>, value: u64, units: &[(u64, &str)]) -> fmt::Result {
    let (scale, unit) = units
        .iter()
        .copied()
        .find(|&(s, _)| value >= s)
        .unwrap_or(units[units.len() - 1]);
    let int = value / scale;
    let rem = value % scale;
    if rem == 0 {
        return write!(f, "{int}{unit}");
    }
    let width = scale.ilog10() as usize;
    let frac = format!("{rem:0width$}");
    write!(f, "{int}.{}{unit}", frac.trim_end_matches('0'))
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[
                (1_000_000_000, "km"),
                (1_000_000, "m"),
                (1_000, "mm"),
                (1, "um"),
            ],
        )
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[
                (1_000_000_000_000, "s"),
                (1_000_000_000, "ms"),
                (1_000_000, "us"),
                (1_000, "ns"),
                (1, "ps"),
            ],
        )
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[
                (1_000_000_000_000, "T"),
                (1_000_000_000, "G"),
                (1_000_000, "M"),
                (1_000, "K"),
                (1, "b/s"),
            ],
        )
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scaled(
            f,
            self.0,
            &[
                (1_000_000_000, "GB"),
                (1_000_000, "MB"),
                (1_000, "KB"),
                (1, "B"),
            ],
        )
    }
}

/// `153064` -> `153,064`: the PFC Delay Value Constraint Model writes figures this way, and
/// so do we.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    // Digits left before the next comma.
    let mut left = match digits.len() % 3 {
        0 => 3,
        n => n,
    };
    for c in digits.chars() {
        if left == 0 {
            out.push(',');
            left = 3;
        }
        out.push(c);
        left -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(parse_length("100m"), Ok(Length(100_000_000)));
        assert_eq!(parse_length("10km"), Ok(Length(10_000_000_000)));
        assert_eq!(parse_length("2.5 km"), Ok(Length(2_500_000_000)));
        assert_eq!(parse_length("0.5m"), Ok(Length(500_000)));
        let e = parse_length("100").expect_err("must fail");
        assert_eq!(e.reason, "no unit");
        let e = parse_length("10kn").expect_err("must fail");
        assert_eq!(e.reason, "unknown unit \"kn\"");
        assert_eq!(
            e.to_string(),
            "\"10kn\": unknown unit \"kn\"; expected a length such as 100m, 2.5km, 30cm or 500mm"
        );
        assert!(parse_length("0.0000001m")
            .expect_err("must fail")
            .reason
            .starts_with("finer"));
        assert_eq!(
            parse_length("-5m").expect_err("must fail").reason,
            "negative"
        );
        assert_eq!(
            parse_length("1.2.3m").expect_err("must fail").reason,
            "more than one decimal point"
        );
        assert_eq!(
            parse_length("m").expect_err("must fail").reason,
            "no number"
        );
    }

    #[test]
    fn durations_rates_sizes() {
        assert_eq!(parse_duration("5us"), Ok(Duration(5_000_000)));
        assert_eq!(parse_duration("1.5ms"), Ok(Duration(1_500_000_000)));
        assert_eq!(parse_duration("2ms"), Ok(Duration(2_000_000_000)));
        assert_eq!(parse_rate("100G"), Ok(Rate(100_000_000_000)));
        assert_eq!(parse_rate("2.5G"), Ok(Rate(2_500_000_000)));
        assert_eq!(parse_rate("100Gb/s"), Ok(Rate(100_000_000_000)));
        assert_eq!(parse_rate("100Gbps"), Ok(Rate(100_000_000_000)));
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("100GB/s")
            .expect_err("must fail")
            .reason
            .contains("bits"));
        assert_eq!(parse_bytes("9216"), Ok(Bytes(9216)));
        assert_eq!(parse_bytes("32KiB"), Ok(Bytes(32_768)));
        assert_eq!(parse_bytes("19.1KB"), Ok(Bytes(19_100)));
        assert!(parse_bytes("2kb")
            .expect_err("must fail")
            .reason
            .contains("bits"));
        assert!(parse_bytes("1.5B").is_err());
    }

    #[test]
    fn delays_and_frames() {
        assert_eq!(parse_delay("37888"), Ok(Delay::Bits(37_888)));
        assert_eq!(parse_delay("37888bt"), Ok(Delay::Bits(37_888)));
        // PFC Delay Value Constraint Model, table 2: MACsec SecY transmit delay, 33.25 pause
        // quanta = 17,024 bit times.
        assert_eq!(parse_delay("33.25q"), Ok(Delay::Bits(17_024)));
        assert_eq!(parse_delay("1.5us"), Ok(Delay::Time(Duration(1_500_000))));
        assert!(parse_delay("3 parsecs").is_err());
        assert_eq!(FrameSize::Octets(2000).bit_times(), 16_160);
        assert_eq!(FrameSize::Octets(64).bit_times(), 672);
        assert_eq!(parse_frame("2000"), Ok(FrameSize::Octets(2000)));
        assert_eq!(parse_frame("16160bt"), Ok(FrameSize::Bits(16_160)));
    }

    #[test]
    fn formatting() {
        assert_eq!(Length(100_000_000).to_string(), "100m");
        assert_eq!(Length(1_500_000).to_string(), "1.5m");
        assert_eq!(Duration(2_000_000_000).to_string(), "2ms");
        assert_eq!(Rate(2_500_000_000).to_string(), "2.5G");
        assert_eq!(Bytes(19_133).to_string(), "19.133KB");
        assert_eq!(grouped(153_064), "153,064");
        assert_eq!(grouped(64), "64");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }

    #[test]
    fn duration_to_bits_rounds_up() {
        // 1 ns at 10G is 10 bit times; 0.15 ns is 1.5, which needs 2.
        assert_eq!(Duration(1_000).bit_times(Rate(10_000_000_000)), 10);
        assert_eq!(Duration(150).bit_times(Rate(10_000_000_000)), 2);
    }
}
