//! Interface Delay (ID) per station: the sum of MAC Control, MAC/RS, PCS, PMA and PMD
//! delays, transmit plus receive (PFC Delay Value Constraint Model, section 4). For 10G, its
//! table 1 gives each IEEE 802.3 sub-layer, and we compose PHYs from it. For the other speeds
//! there is one published figure (Adaptive PFC Headroom: 100GBASE-R) and the IEEE 802.3
//! annex 31B PAUSE reaction limits (31B.3.7), as SONiC's headroom calculation uses them;
//! each default says which it used, and `--interface-delay` overrides any of them.

use serde::Serialize;

use crate::source::Source;
use crate::units::{Rate, BITS_PER_QUANTUM};

/// One row of the PFC Delay Value Constraint Model's table 1 ("Existing 802.3 Interface
/// Delay Constraints").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SubLayer {
    pub name: &'static str,
    /// Maximum round trip (transmit + receive), bit times.
    pub bit_times: u64,
    /// IEEE 802.3 clause.
    pub clause: &'static str,
}

pub const MAC_RS_10G: SubLayer = SubLayer {
    name: "10G MAC Control, MAC and RS",
    bit_times: 8_192,
    clause: "46.1.4",
};
pub const XGXS_XAUI: SubLayer = SubLayer {
    name: "XGXS and XAUI",
    bit_times: 2_048,
    clause: "48.5",
};
pub const PCS_10GBASE_X: SubLayer = SubLayer {
    name: "10GBASE-X PCS",
    bit_times: 2_048,
    clause: "49.2.15",
};
pub const PCS_10GBASE_R: SubLayer = SubLayer {
    name: "10GBASE-R PCS",
    bit_times: 3_584,
    clause: "50.3.7",
};
pub const PMD_LX4: SubLayer = SubLayer {
    name: "LX4 PMD",
    bit_times: 512,
    clause: "53.2",
};
pub const PMD_CX4: SubLayer = SubLayer {
    name: "CX4 PMD",
    bit_times: 512,
    clause: "54.3",
};
pub const PMA_PMD_SERIAL: SubLayer = SubLayer {
    name: "Serial PMA and PMD",
    bit_times: 512,
    clause: "52.2",
};
pub const PHY_10GBASE_T: SubLayer = SubLayer {
    name: "10GBASE-T",
    bit_times: 25_600,
    clause: "55.11",
};

/// A 10G station built from table 1's sub-layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Phy {
    pub name: &'static str,
    pub description: &'static str,
    /// (sub-layer, how many times it is crossed) - a XAUI link has an XGXS at each end.
    pub parts: &'static [(SubLayer, u64)],
}

impl Phy {
    pub fn bit_times(&self) -> u64 {
        self.parts.iter().map(|(s, n)| s.bit_times * n).sum()
    }
}

/// The PFC Delay Value Constraint Model's worst case and its worked example: an ASIC with XGMII
/// MAC/RS and XAUI (8192 + 2 x 2048 = 12,288) to a 10GBASE-T PHY (25,600): 37,888 bit times per
/// station.
pub const PHY_10G_T_XAUI: Phy = Phy {
    name: "10gbase-t",
    description: "10GBASE-T PHY reached over XAUI (the PFC Delay Value Constraint Model's \
                  worst case)",
    parts: &[(MAC_RS_10G, 1), (XGXS_XAUI, 2), (PHY_10GBASE_T, 1)],
};

/// The 10G PHYs we can compose from the PFC Delay Value Constraint Model's table 1.
pub const PHYS_10G: &[Phy] = &[
    PHY_10G_T_XAUI,
    Phy {
        name: "10gbase-r",
        description: "10GBASE-SR/LR/ER: 10GBASE-R PCS, serial PMA/PMD, no XAUI",
        parts: &[(MAC_RS_10G, 1), (PCS_10GBASE_R, 1), (PMA_PMD_SERIAL, 1)],
    },
    Phy {
        name: "10gbase-r-xaui",
        description: "10GBASE-SR/LR/ER module reached over XAUI",
        parts: &[
            (MAC_RS_10G, 1),
            (XGXS_XAUI, 2),
            (PCS_10GBASE_R, 1),
            (PMA_PMD_SERIAL, 1),
        ],
    },
    Phy {
        name: "10gbase-lx4",
        description: "10GBASE-LX4: 10GBASE-X PCS, LX4 PMD",
        parts: &[(MAC_RS_10G, 1), (PCS_10GBASE_X, 1), (PMD_LX4, 1)],
    },
    Phy {
        name: "10gbase-cx4",
        description: "10GBASE-CX4: 10GBASE-X PCS, CX4 PMD",
        parts: &[(MAC_RS_10G, 1), (PCS_10GBASE_X, 1), (PMD_CX4, 1)],
    },
];

pub fn find_phy(name: &str) -> Option<&'static Phy> {
    PHYS_10G.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// What we know at one line rate: the default interface delay per station and where it
/// comes from, and the IEEE 802.3 annex 31B PAUSE reaction limit where we have one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpeedProfile {
    pub rate: Rate,
    pub label: &'static str,
    /// Interface delay per station, bit times.
    pub interface_delay: u64,
    pub source: Source,
    /// 802.3 annex 31B PAUSE reaction limit (pause quanta), as SONiC uses it.
    pub reaction_quanta: Option<u64>,
    /// The interface figure already includes the higher-layer delay (Adaptive PFC Headroom
    /// gives ID+HD as one number at 100G), so the default HD is zero there.
    pub includes_higher_layer: bool,
}

const fn g(n: u64) -> Rate {
    Rate(n * 1_000_000_000)
}

const fn quanta(q: u64) -> u64 {
    q * BITS_PER_QUANTUM
}

const SLOW: Source = Source::assumption(
    "no per-PHY figure for this speed in the PFC Delay Value Constraint Model or Adaptive PFC \
     Headroom: assumed the model's 10G worst case, 37,888 bit times per station (s4), which \
     is generous here",
);
const REACTION: Source = Source::assumption(
    "no per-PHY figure for this speed in the PFC Delay Value Constraint Model or Adaptive PFC \
     Headroom: assumed one IEEE 802.3 annex 31B PAUSE reaction limit per station, as SONiC's \
     headroom calculation uses it",
);

/// Speeds from 1G to 800G.
pub const SPEEDS: &[SpeedProfile] = &[
    SpeedProfile {
        rate: g(1),
        label: "1G",
        interface_delay: 37_888,
        source: SLOW,
        reaction_quanta: None,
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: Rate(2_500_000_000),
        label: "2.5G",
        interface_delay: 37_888,
        source: SLOW,
        reaction_quanta: None,
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(5),
        label: "5G",
        interface_delay: 37_888,
        source: SLOW,
        reaction_quanta: None,
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(10),
        label: "10G",
        interface_delay: 37_888,
        source: Source::table(
            "PFC Delay Value Constraint Model, table 1: 10G MAC/RS 8,192 + 2 x XAUI 2,048 + \
             10GBASE-T 25,600 (the worst case, s4; --phy picks another 10G PHY)",
        ),
        reaction_quanta: Some(67),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(25),
        label: "25G",
        interface_delay: quanta(80),
        source: REACTION,
        reaction_quanta: Some(80),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(40),
        label: "40G",
        interface_delay: quanta(118),
        source: REACTION,
        reaction_quanta: Some(118),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(50),
        label: "50G",
        interface_delay: quanta(147),
        source: REACTION,
        reaction_quanta: Some(147),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(100),
        label: "100G",
        interface_delay: 132_608 / 2,
        source: Source::document(
            "Adaptive PFC Headroom, delay table: 100GBASE-R 802.3 maximum ID + HD = 132,608 bit \
             times, split evenly between the two stations (assumption), HD included",
        ),
        reaction_quanta: Some(394),
        includes_higher_layer: true,
    },
    SpeedProfile {
        rate: g(200),
        label: "200G",
        interface_delay: quanta(453),
        source: REACTION,
        reaction_quanta: Some(453),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(400),
        label: "400G",
        interface_delay: quanta(905),
        source: REACTION,
        reaction_quanta: Some(905),
        includes_higher_layer: false,
    },
    SpeedProfile {
        rate: g(800),
        label: "800G",
        interface_delay: quanta(1_810),
        source: Source::assumption(
            "assumed twice 400G's IEEE 802.3 annex 31B PAUSE reaction limit (1,810 pause \
             quanta) per station",
        ),
        reaction_quanta: None,
        includes_higher_layer: false,
    },
];

pub fn profile(rate: Rate) -> Option<&'static SpeedProfile> {
    SPEEDS.iter().find(|p| p.rate == rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dv_model_interface_delay_is_37888() {
        assert_eq!(PHY_10G_T_XAUI.bit_times(), 37_888);
        // PFC Delay Value Constraint Model s7: "AISC Interface (XGMII MAC/RS and XAUI) (8192 +
        // 2x2048 = 12,288)"
        assert_eq!(MAC_RS_10G.bit_times + 2 * XGXS_XAUI.bit_times, 12_288);
        assert_eq!(
            profile(Rate(10_000_000_000)).map(|p| p.interface_delay),
            Some(37_888)
        );
    }

    #[test]
    fn every_speed_from_1g_to_800g_has_a_profile() {
        for g in [1, 10, 25, 40, 50, 100, 200, 400, 800] {
            assert!(profile(Rate(g * 1_000_000_000)).is_some(), "{g}G");
        }
        assert!(find_phy("10GBASE-R").is_some());
        assert_eq!(find_phy("10gbase-r").map(Phy::bit_times), Some(12_288));
    }
}
