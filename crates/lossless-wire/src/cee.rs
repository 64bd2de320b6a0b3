//! CEE DCBX (the pre-IEEE "DCB Capability Exchange Protocol Base Specification")
//! as it travels in an LLDP organizationally specific TLV: OUI 00-1B-21, subtype 2.
//!
//! ```text
//! Sub-TLV header (2 bytes): type << 9 | length (7-bit type, 9-bit body length)
//! Control  type 1, len 10: oper_version | max_version | SeqNo u32 | AckNo u32
//! Feature header (4 bytes): oper_version | max_version | flags (b7 Enable, b6 Willing, b5 Error) | subtype
//! PG       type 2, len 17: header | PGID nibbles (prio 0 = high nibble of byte 0) | 8 x percent | num_tcs
//! PFC      type 3, len 6:  header | enable bitmap (bit n = priority n) | num_tcs
//! APP      type 4, len 4+6n: header | n x { proto u16 | OUI[0]&0xFC | selector (2 bits) | OUI[1] | OUI[2] | prio bitmap }
//! ```
//!
//! Byte-identical to what lldpad emits (it rejects other lengths). The types in
//! this module are plain values: the DCBX core keeps them as DesiredCfg,
//! PeerCfg and OperCfg.

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::table::Table;
use crate::DecodeError;

/// The OUI of the pre-standard DCBX TLVs (offered by Intel for all parties).
pub const DCBX_OUI: [u8; 3] = [0x00, 0x1b, 0x21];
/// OUI subtype of the CIN layout (DCBX version 1.0, "subtype 1"): recognised, not negotiated.
pub const SUBTYPE_CIN: u8 = 1;
/// OUI subtype of the CEE layout (DCBX version 1.01, "subtype 2").
pub const SUBTYPE_CEE: u8 = 2;

/// Sub-TLV type codes inside the CEE TLV.
pub mod subtlv {
    pub const CONTROL: u8 = 1;
    pub const PG: u8 = 2;
    pub const PFC: u8 = 3;
    pub const APP: u8 = 4;
}

/// Fixed body lengths of the CEE sub-TLVs (lldpad rejects any other).
pub const CONTROL_LEN: usize = 10;
pub const PG_LEN: usize = 17;
pub const PFC_LEN: usize = 6;
/// APP body: 4-byte feature header plus 6 bytes per entry.
pub const APP_HEADER_LEN: usize = 4;
pub const APP_ENTRY_LEN: usize = 6;
/// The most APP entries that fit in a 9-bit sub-TLV length ((511 - 4) / 6):
/// the capacity of [`AppTable`], enough for any sub-TLV a parser meets.
pub const MAX_APP_ENTRIES: usize = 84;
/// The APP entries an [`AppTable`] holds in place; a longer table moves to the
/// heap (so parsing an APP sub-TLV of more entries allocates once). The tables
/// lldpad and switches send have one to three (FCoE, iSCSI, RoCE).
pub const INLINE_APP_ENTRIES: usize = 4;
/// The longest value of the LLDP TLV that carries all of this (9-bit length).
pub const MAX_TLV_VALUE_LEN: usize = 511;
/// The most APP entries a CEE TLV can carry next to Control, PG and PFC (the
/// agent always sends all four): OUI and subtype (4), Control (2 + 10), PG
/// (2 + 17), PFC (2 + 6) and the APP sub-TLV (2 + 4 + 6n) share the TLV's
/// 511 octets. [`AppConfig::validate`] holds local configuration to it, so a
/// valid configuration always fits; `Lldpdu::emit` refuses a TLV that does not.
pub const MAX_SENT_APP_ENTRIES: usize = (MAX_TLV_VALUE_LEN
    - 4
    - (2 + CONTROL_LEN)
    - (2 + PG_LEN)
    - (2 + PFC_LEN)
    - (2 + APP_HEADER_LEN))
    / APP_ENTRY_LEN;

/// Bit 4 of a feature header's flags, reserved in CEE: set in the PFC sub-TLV by a
/// station that measures link delay for adaptive PFC headroom (Adaptive PFC
/// Headroom, phase 1: "augment DCBX by extending PFC configuration TLV"). The
/// sub-TLV keeps its length, so lldpad (which reads only bits 7..5) and tshark
/// decode it unchanged.
pub const FLAG_HEADROOM_MEASUREMENT: u8 = 0x10;

/// PGID 15: the priority is served with strict priority, outside any bandwidth group.
pub const PGID_STRICT: u8 = 15;

/// A set of the eight IEEE 802.1p priorities; bit n is priority n.
///
/// Serialises as the list of member priorities (`[3, 4]`), which is what users
/// read and write.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PriorityMap(pub u8);

impl PriorityMap {
    pub const NONE: PriorityMap = PriorityMap(0);

    pub fn contains(self, priority: u8) -> bool {
        priority < 8 && self.0 & (1 << priority) != 0
    }

    pub fn priorities(self) -> impl Iterator<Item = u8> {
        (0..8u8).filter(move |p| self.0 & (1 << p) != 0)
    }

    /// Builds a map from priorities, refusing any outside 0..=7.
    pub fn from_priorities(list: &[u8]) -> Result<Self, u8> {
        let mut bits = 0u8;
        for &p in list {
            if p > 7 {
                return Err(p);
            }
            bits |= 1 << p;
        }
        Ok(PriorityMap(bits))
    }
}

impl std::fmt::Debug for PriorityMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.priorities()).finish()
    }
}

impl std::fmt::Display for PriorityMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == 0 {
            return f.write_str("none");
        }
        let mut first = true;
        for p in self.priorities() {
            if !first {
                f.write_str(",")?;
            }
            write!(f, "{p}")?;
            first = false;
        }
        Ok(())
    }
}

impl Serialize for PriorityMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.priorities())
    }
}

impl<'de> Deserialize<'de> for PriorityMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<u8>::deserialize(d)?;
        PriorityMap::from_priorities(&list)
            .map_err(|p| serde::de::Error::custom(format!("priority {p} is out of range 0..=7")))
    }
}

/// The 4-byte header that starts every feature sub-TLV (CEE DCBX specification
/// Table 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FeatureHeader {
    pub oper_version: u8,
    pub max_version: u8,
    pub enable: bool,
    pub willing: bool,
    pub error: bool,
    /// The five low bits of the flags byte; reserved, zero on transmit, kept so
    /// that emit(parse(b)) == b.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserved_flags: u8,
    pub subtype: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// The DCBX Control sub-TLV (CEE DCBX specification Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Control {
    pub oper_version: u8,
    pub max_version: u8,
    pub seq: u32,
    pub ack: u32,
}

/// Priority Group configuration (CEE DCBX specification §3.1): which PG each
/// priority belongs to and each PG's share of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PgConfig {
    /// PGID of priority 0..7: 0..=7, or 15 for strict priority.
    pub pgid: [u8; 8],
    /// Percentage of link bandwidth per PGID 0..7; sums to 100.
    pub percent: [u8; 8],
    /// Number of traffic classes the device supports (NumTCsSupported).
    pub num_tcs: u8,
}

impl Default for PgConfig {
    /// lldpad's default: one PG per priority, 13/13/13/13/12/12/12/12 %, 8 TCs.
    fn default() -> Self {
        PgConfig {
            pgid: [0, 1, 2, 3, 4, 5, 6, 7],
            percent: [13, 13, 13, 13, 12, 12, 12, 12],
            num_tcs: 8,
        }
    }
}

/// Priority-based Flow Control configuration (CEE DCBX specification §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PfcConfig {
    /// Priorities with PFC enabled (admin mode 1).
    pub priorities: PriorityMap,
    /// Number of TCs that can simultaneously support PFC (NumTCPFCSupported).
    pub num_tcs: u8,
}

impl Default for PfcConfig {
    /// PFC on no priority, 8 TCs (lldpad's default).
    fn default() -> Self {
        PfcConfig {
            priorities: PriorityMap::NONE,
            num_tcs: 8,
        }
    }
}

/// How an APP entry's protocol id is to be read (2-bit selector field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppSelector(pub u8);

impl AppSelector {
    /// The protocol id is an Ethertype (FCoE 0x8906, FIP 0x8914, RoCE 0x8915).
    pub const ETHERTYPE: AppSelector = AppSelector(0);
    /// The protocol id is a TCP/UDP port (iSCSI 3260, RoCEv2 4791).
    pub const PORT: AppSelector = AppSelector(1);

    pub fn name(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("ethertype"),
            1 => Some("port"),
            _ => None,
        }
    }
}

impl Serialize for AppSelector {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.name() {
            Some(n) => s.serialize_str(n),
            None => s.serialize_u8(self.0),
        }
    }
}

impl<'de> Deserialize<'de> for AppSelector {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Num(u8),
        }
        match Raw::deserialize(d)? {
            Raw::Name(n) if n == "ethertype" => Ok(AppSelector::ETHERTYPE),
            Raw::Name(n) if n == "port" || n == "tcp-udp" => Ok(AppSelector::PORT),
            Raw::Name(n) => Err(serde::de::Error::custom(format!(
                "unknown APP selector {n:?}: expected \"ethertype\" or \"port\""
            ))),
            Raw::Num(v) if v <= 3 => Ok(AppSelector(v)),
            Raw::Num(v) => Err(serde::de::Error::custom(format!(
                "APP selector {v} does not fit in 2 bits"
            ))),
        }
    }
}

/// One APP entry: traffic identified by (selector, protocol id) goes on these priorities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AppEntry {
    pub selector: AppSelector,
    pub protocol: u16,
    /// OUI whose upper six bits share a byte with the selector; 00-1B-21 in practice.
    #[serde(default = "dcbx_oui")]
    pub oui: [u8; 3],
    pub priorities: PriorityMap,
}

fn dcbx_oui() -> [u8; 3] {
    DCBX_OUI
}

/// The APP table: at most [`MAX_APP_ENTRIES`] entries, in wire order, the first
/// [`INLINE_APP_ENTRIES`] in place.
pub type AppTable = Table<AppEntry, MAX_APP_ENTRIES, INLINE_APP_ENTRIES>;

/// Application priority configuration (CEE DCBX 1.01 APP sub-TLV).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AppConfig {
    pub entries: AppTable,
}

/// A feature sub-TLV: the common header plus the feature's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureTlv<C> {
    pub header: FeatureHeader,
    pub cfg: C,
}

/// Which duplicates a CEE TLV carried (CEE DCBX specification §2.4.1: a
/// duplicate feature sub-TLV is a configuration error for that feature; a
/// duplicate Control is an error for all features).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Duplicates {
    pub control: bool,
    pub pg: bool,
    pub pfc: bool,
    pub app: bool,
}

impl Duplicates {
    pub fn any(&self) -> bool {
        self.control || self.pg || self.pfc || self.app
    }
}

/// A parsed CEE DCBX TLV.
///
/// Structural errors (truncation, a sub-TLV running past its TLV, a zero-length
/// sub-TLV, a Control sub-TLV of the wrong length) make the whole TLV fail to
/// parse. A feature sub-TLV with bad contents (wrong length, PGID 8..14,
/// percentages not summing to 100, ...) is kept as `Some(Err(..))`: DCBX
/// treats that feature as absent and reports why, the rest of the TLV stands.
/// Duplicates keep the first instance and are flagged in `duplicates`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CeeDcbx {
    pub control: Option<Control>,
    pub pg: Option<Result<FeatureTlv<PgConfig>, DecodeError>>,
    pub pfc: Option<Result<FeatureTlv<PfcConfig>, DecodeError>>,
    pub app: Option<Result<FeatureTlv<AppConfig>, DecodeError>>,
    pub duplicates: Duplicates,
    /// Non-fatal findings in wire order: duplicates (kind `Duplicate`) and
    /// invalid feature sub-TLVs, each with its offset. At most 8 are kept.
    pub anomalies: ArrayVec<DecodeError, 8>,
    /// Sub-TLVs of types this implementation does not know; skipped (as lldpad does).
    pub unknown_subtlvs: u16,
}

mod codec;

/// A configuration value the CEE DCBX spec does not allow, found either in a
/// received sub-TLV or in local configuration.
///
/// `field` uses the same names for both (`"pg.pgid"`, `"app.selector"`, ...),
/// `index` is the priority, PGID or APP entry the value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct InvalidValue {
    pub field: &'static str,
    pub index: Option<usize>,
    pub value: u64,
    pub reason: &'static str,
}

impl std::fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{}] = {}: {}", self.field, i, self.value, self.reason),
            None => write!(f, "{} = {}: {}", self.field, self.value, self.reason),
        }
    }
}

/// The largest NumTCsSupported / NumTCPFCSupported.
///
/// The CEE DCBX specification gives the PG range as "0..7" (the dash lost)
/// and the PFC range as 1..8. Eight traffic classes is what lldpad and every NIC send, and a device
/// with zero TCs cannot carry traffic, so both fields accept 1..=8 and refuse
/// 0 and 9..=255, on receive and in local configuration alike.
pub const MAX_TCS: u8 = 8;

fn check_num_tcs(field: &'static str, v: u8) -> Result<(), InvalidValue> {
    if (1..=MAX_TCS).contains(&v) {
        Ok(())
    } else {
        Err(InvalidValue {
            field,
            index: None,
            value: v.into(),
            reason: "number of traffic classes must be 1..8",
        })
    }
}

impl PgConfig {
    /// Checks PGIDs (0..=7 or 15), percentages (each <= 100, all eight
    /// summing to exactly 100) and num_tcs (1..=8). The first violation found,
    /// in wire order, is returned.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        for (i, &pgid) in self.pgid.iter().enumerate() {
            if pgid > 7 && pgid != PGID_STRICT {
                return Err(InvalidValue {
                    field: "pg.pgid",
                    index: Some(i),
                    value: pgid.into(),
                    reason: "PGID must be 0..7 or 15",
                });
            }
        }
        for (i, &pct) in self.percent.iter().enumerate() {
            if pct > 100 {
                return Err(InvalidValue {
                    field: "pg.percent",
                    index: Some(i),
                    value: pct.into(),
                    reason: "a percentage cannot exceed 100",
                });
            }
        }
        let sum: u64 = self.percent.iter().map(|&p| u64::from(p)).sum();
        if sum != 100 {
            return Err(InvalidValue {
                field: "pg.percent",
                index: None,
                value: sum,
                reason: "the eight percentages must sum to 100",
            });
        }
        check_num_tcs("pg.num_tcs", self.num_tcs)
    }
}

impl PfcConfig {
    /// Any enable bitmap is valid; num_tcs must be 1..=8.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        check_num_tcs("pfc.num_tcs", self.num_tcs)
    }
}

impl AppEntry {
    /// The selector must fit its 2 bits and the OUI's first byte must leave
    /// them free, or the entry cannot be written without changing one of them.
    /// Any priority map is allowed (the empty one means "no priority").
    pub fn validate(&self) -> Result<(), InvalidValue> {
        if self.selector.0 > 3 {
            return Err(InvalidValue {
                field: "app.selector",
                index: None,
                value: self.selector.0.into(),
                reason: "selector must fit in 2 bits (0..3)",
            });
        }
        if self.oui[0] & 0x03 != 0 {
            return Err(InvalidValue {
                field: "app.oui",
                index: None,
                value: self.oui[0].into(),
                reason: "the low 2 bits of OUI[0] carry the selector and must be zero",
            });
        }
        Ok(())
    }
}

impl AppConfig {
    /// Validates every entry (the error's `index` is the entry's position)
    /// and the table's size: at most [`MAX_SENT_APP_ENTRIES`], what fits in
    /// the CEE TLV next to Control, PG and PFC.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        if self.entries.len() > MAX_SENT_APP_ENTRIES {
            return Err(InvalidValue {
                field: "app.entries",
                index: None,
                value: self.entries.len() as u64,
                reason: "at most 77 APP entries fit in the CEE TLV next to Control, PG and PFC",
            });
        }
        for (i, e) in self.entries.iter().enumerate() {
            e.validate().map_err(|err| InvalidValue {
                index: Some(i),
                ..err
            })?;
        }
        Ok(())
    }
}

impl FeatureHeader {
    /// The flags byte: bit 7 Enable, bit 6 Willing, bit 5 Error, bits 4..0 reserved.
    pub fn flags(&self) -> u8 {
        (u8::from(self.enable) << 7)
            | (u8::from(self.willing) << 6)
            | (u8::from(self.error) << 5)
            | (self.reserved_flags & 0x1f)
    }

    /// Header with the given Enable/Willing flags, versions 0 (what lldpad sends).
    pub fn new(enable: bool, willing: bool) -> Self {
        FeatureHeader {
            enable,
            willing,
            ..FeatureHeader::default()
        }
    }
}

impl<C> FeatureTlv<C> {
    pub fn new(header: FeatureHeader, cfg: C) -> Self {
        FeatureTlv { header, cfg }
    }
}

impl CeeDcbx {
    /// A TLV to send: Control plus the features given, all valid as far as
    /// the caller knows (emit writes what it is given; validate first).
    pub fn new(
        control: Control,
        pg: Option<FeatureTlv<PgConfig>>,
        pfc: Option<FeatureTlv<PfcConfig>>,
        app: Option<FeatureTlv<AppConfig>>,
    ) -> CeeDcbx {
        CeeDcbx {
            control: Some(control),
            pg: pg.map(Ok),
            pfc: pfc.map(Ok),
            app: app.map(Ok),
            ..CeeDcbx::default()
        }
    }

    /// What `parse(emit(self))` gives: emission drops invalid features,
    /// duplicates and unknown sub-TLVs, so the parsed copy has none of them.
    /// Round-trip tests and the fuzz targets compare against this.
    pub fn normalized(&self) -> CeeDcbx {
        CeeDcbx {
            control: self.control,
            pg: self.pg.clone().filter(Result::is_ok),
            pfc: self.pfc.clone().filter(Result::is_ok),
            app: self.app.clone().filter(Result::is_ok),
            ..CeeDcbx::default()
        }
    }
}
