//! A vendor's static headroom table, to compare the model against: SONiC's
//! `pg_profile_lookup.ini` for the Mellanox SN4700 (Spectrum-3, 32 x 400G), a platform
//! whose table has both 100G and 400G rows.
//!
//! What SONiC does with it (sonic-net/sonic-swss `cfgmgr/buffermgr.cpp`, commit
//! e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779, `readPgProfileLookupFile` and
//! `doSpeedUpdateTask`): buffermgrd reads each line as whitespace-separated
//! `speed cable size xon xoff threshold [xon_offset]`, keyed by the speed and cable strings
//! as written. A port is looked up with its speed in Mb/s (`100000`) and its cable length
//! from the CABLE_LENGTH table (`5m`, `40m`, `300m`): both must equal a listed key exactly,
//! otherwise buffermgrd logs "Unable to create/update PG profile for port ... No PG profile
//! configured for speed ... and cable length ..." and the port gets no lossless PG profile.
//! There is no interpolation and no rounding up to the next listed length, so 500 m, 10 km
//! and 80 km have no answer at all.
//!
//! Columns, all bytes (SONiC's BUFFER_PROFILE `size`, `xon`, `xoff` are byte counts; this
//! table's values are multiples of 1 KiB): `xoff` is the headroom, the buffer held above the
//! xoff point for what is still in flight after PFC is sent, which is what the Delay Value
//! sizes, so `xoff` is the column to compare with the model. `xon` is the part of the PG's
//! reserve kept below the xon point; `size` is the PG's whole reserve (xon + xoff here, plus
//! 9,216 bytes in the 400G rows); `threshold` is the profile's `dynamic_th`, the exponent of
//! the shared-buffer alpha (2^0 = 1).

use std::fmt;

use serde::Serialize;

use crate::units::{Length, Rate};

/// Where a static table was copied from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TableSource {
    pub repository: &'static str,
    pub path: &'static str,
    /// The snapshot the rows were read from.
    pub commit: &'static str,
    /// The file's git blob at that commit.
    pub blob: &'static str,
    /// The last commit that changed the values (later ones only touched comments).
    pub values_commit: &'static str,
}

/// One line of `pg_profile_lookup.ini`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Port speed in Mb/s, SONiC's key.
    pub speed_mbps: u64,
    /// Cable length as written in the file, SONiC's key.
    pub cable: &'static str,
    pub size: u64,
    pub xon: u64,
    /// The headroom: what the model's need is compared with.
    pub xoff: u64,
    /// `dynamic_th` of the profile (shared-buffer alpha = 2^threshold).
    pub threshold: i8,
}

/// A platform's static table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StaticTable {
    pub vendor: &'static str,
    pub platform: &'static str,
    pub hwsku: &'static str,
    pub source: TableSource,
    pub rows: &'static [Row],
}

const fn row(speed_mbps: u64, cable: &'static str, size: u64, xon: u64, xoff: u64) -> Row {
    Row {
        speed_mbps,
        cable,
        size,
        xon,
        xoff,
        threshold: 0,
    }
}

/// SONiC's static table for the Mellanox SN4700, every row of the file in its order.
pub const SONIC_SN4700: StaticTable = StaticTable {
    vendor: "Mellanox (NVIDIA)",
    platform: "x86_64-mlnx_msn4700-r0",
    hwsku: "ACS-MSN4700",
    source: TableSource {
        repository: "sonic-net/sonic-buildimage",
        path: "device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini",
        commit: "086b03bd70f9e211aaaf5f6aefe0790b508d2a94",
        blob: "b1b13a5c303c4e09ac55c923408acb98115535fb",
        values_commit: "0db7e88313994cffe5e29e2ebe5f0aa993073513",
    },
    rows: &[
        row(10_000, "5m", 52_224, 19_456, 32_768),
        row(25_000, "5m", 52_224, 19_456, 32_768),
        row(40_000, "5m", 53_248, 19_456, 33_792),
        row(50_000, "5m", 53_248, 19_456, 33_792),
        row(100_000, "5m", 53_248, 19_456, 33_792),
        row(200_000, "5m", 55_296, 19_456, 35_840),
        row(400_000, "5m", 86_016, 37_888, 38_912),
        row(10_000, "40m", 53_248, 19_456, 33_792),
        row(25_000, "40m", 55_296, 19_456, 35_840),
        row(40_000, "40m", 57_344, 19_456, 37_888),
        row(50_000, "40m", 58_368, 19_456, 38_912),
        row(100_000, "40m", 63_488, 19_456, 44_032),
        row(200_000, "40m", 74_752, 19_456, 55_296),
        row(400_000, "40m", 124_928, 37_888, 77_824),
        row(10_000, "300m", 60_416, 19_456, 40_960),
        row(25_000, "300m", 73_728, 19_456, 54_272),
        row(40_000, "300m", 86_016, 19_456, 66_560),
        row(50_000, "300m", 95_232, 19_456, 75_776),
        row(100_000, "300m", 137_216, 19_456, 117_760),
        row(200_000, "300m", 223_232, 19_456, 203_776),
        row(400_000, "300m", 420_864, 37_888, 373_760),
    ],
};

/// The keys SONiC would look a port up with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Key {
    /// Mb/s, as the PORT table writes the speed (`100000`).
    pub speed: String,
    /// Metres with an `m`, as the CABLE_LENGTH table writes it (`5m`, `300m`).
    pub cable: String,
}

impl Key {
    pub fn new(speed: Rate, cable: Length) -> Key {
        Key {
            speed: speed_key(speed),
            cable: cable_key(cable),
        }
    }
}

/// `100G` -> `100000`. A rate that is not a whole number of Mb/s cannot be a SONiC port
/// speed; it is written in b/s with its unit so it matches nothing.
pub fn speed_key(speed: Rate) -> String {
    if speed.0.is_multiple_of(1_000_000) {
        (speed.0 / 1_000_000).to_string()
    } else {
        format!("{}bps", speed.0)
    }
}

/// `5m` -> `5m`, `10km` -> `10000m`, `2.5m` -> `2.5m`: metres, as SONiC's configuration
/// writes cable lengths.
pub fn cable_key(cable: Length) -> String {
    let whole = cable.0 / 1_000_000;
    let frac = cable.0 % 1_000_000;
    if frac == 0 {
        format!("{whole}m")
    } else {
        let digits = format!("{frac:06}");
        format!("{whole}.{}m", digits.trim_end_matches('0'))
    }
}

/// The table has no row for the key: buffermgrd's error, worded as it logs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("No PG profile configured for speed {} and cable length {}", key.speed, key.cable)]
pub struct NoProfile {
    pub key: Key,
    /// The cable lengths the table lists for this speed (empty: the speed is not listed).
    pub listed_cables: Vec<&'static str>,
}

impl StaticTable {
    /// What buffermgrd does: both keys must match a row exactly.
    pub fn lookup(&self, speed: Rate, cable: Length) -> Result<&'static Row, NoProfile> {
        let key = Key::new(speed, cable);
        let rows: &'static [Row] = self.rows;
        rows.iter()
            .find(|r| r.speed_mbps.to_string() == key.speed && r.cable == key.cable)
            .ok_or_else(|| NoProfile {
                listed_cables: rows
                    .iter()
                    .filter(|r| r.speed_mbps.to_string() == key.speed)
                    .map(|r| r.cable)
                    .collect(),
                key,
            })
    }

    /// The distinct cable lengths the table lists, in file order.
    pub fn cables(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for r in self.rows {
            if !out.contains(&r.cable) {
                out.push(r.cable);
            }
        }
        out
    }
}

impl fmt::Display for Row {
    /// The row in the file's column order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {}",
            self.speed_mbps, self.cable, self.size, self.xon, self.xoff, self.threshold
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{parse_length, parse_rate};

    /// The data lines of the file at the recorded commit, as they appear there. The rows
    /// above were typed from them; this checks the typing.
    const FILE_ROWS: &str = "
  10000    5m 52224  19456  32768          0
  25000    5m 52224  19456  32768          0
  40000    5m 53248  19456  33792          0
  50000    5m 53248  19456  33792          0
 100000    5m 53248  19456  33792          0
 200000    5m 55296  19456  35840          0
 400000    5m 86016  37888  38912          0
  10000   40m 53248  19456  33792          0
  25000   40m 55296  19456  35840          0
  40000   40m 57344  19456  37888          0
  50000   40m 58368  19456  38912          0
 100000   40m 63488  19456  44032          0
 200000   40m 74752  19456  55296          0
 400000   40m 124928 37888  77824          0
  10000  300m 60416  19456  40960          0
  25000  300m 73728  19456  54272          0
  40000  300m 86016  19456  66560          0
  50000  300m 95232  19456  75776          0
 100000  300m 137216 19456  117760         0
 200000  300m 223232 19456  203776         0
 400000  300m 420864 37888  373760         0
";

    fn look(speed: &str, cable: &str) -> Result<&'static Row, NoProfile> {
        SONIC_SN4700.lookup(
            parse_rate(speed).expect("rate"),
            parse_length(cable).expect("length"),
        )
    }

    #[test]
    fn rows_match_the_file() {
        let lines: Vec<String> = FILE_ROWS
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let rows: Vec<String> = SONIC_SN4700.rows.iter().map(Row::to_string).collect();
        assert_eq!(rows, lines);
    }

    #[test]
    fn listed_pairs_are_found() {
        let r = look("100G", "5m").expect("listed");
        assert_eq!(
            (r.size, r.xon, r.xoff, r.threshold),
            (53_248, 19_456, 33_792, 0)
        );
        assert_eq!(look("400G", "300m").map(|r| r.xoff), Ok(373_760));
        assert_eq!(look("400G", "40m").map(|r| r.xoff), Ok(77_824));
        // The same length typed another way is the same key.
        assert_eq!(look("100G", "0.3km").map(|r| r.xoff), Ok(117_760));
        assert_eq!(look("100G", "5000mm").map(|r| r.xoff), Ok(33_792));
        assert_eq!(look("100Gb/s", "40m").map(|r| r.xoff), Ok(44_032));
    }

    #[test]
    fn anything_else_is_no_pg_profile() {
        let e = look("100G", "500m").expect_err("not listed");
        assert_eq!(
            e.to_string(),
            "No PG profile configured for speed 100000 and cable length 500m"
        );
        assert_eq!(e.listed_cables, ["5m", "40m", "300m"]);
        for (speed, cable, key) in [
            ("400G", "10km", "10000m"),
            ("400G", "80km", "80000m"),
            // One metre more than a listed length: still nothing, no rounding up.
            ("100G", "41m", "41m"),
            ("100G", "4.5m", "4.5m"),
        ] {
            let e = look(speed, cable).expect_err("not listed");
            assert_eq!(e.key.cable, key);
        }
        // A speed the table does not list.
        let e = look("800G", "5m").expect_err("not listed");
        assert_eq!(e.key.speed, "800000");
        assert!(e.listed_cables.is_empty());
        assert_eq!(SONIC_SN4700.cables(), ["5m", "40m", "300m"]);
    }

    #[test]
    fn keys() {
        assert_eq!(speed_key(Rate(2_500_000_000)), "2500");
        assert_eq!(speed_key(Rate(1_500)), "1500bps");
        assert_eq!(cable_key(Length(2_500_000)), "2.5m");
        assert_eq!(cable_key(Length(1)), "0.000001m");
        assert_eq!(cable_key(Length(0)), "0m");
    }
}
