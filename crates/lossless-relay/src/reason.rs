//! Why a frame was not relayed: one reason per rule, one counter per reason.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Every way a frame can fail the relay's rules. The first eight apply to a
/// PFC frame wherever it is checked (egress PE, inside the tunnel at the
/// ingress PE, DC gateway); the last four to what arrives from the WAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Fewer bytes than a MAC Control frame: 60 without FCS, 64 with a VLAN
    /// tag (a runt, or a header cut short).
    ShortFrame,
    /// More bytes than a MAC Control frame, which is always of minimum size
    /// (draft-he-rtgwg-wan-pfc-00, figure 1: 34 octets of fields, 26 of pad, 4 of CRC).
    LongFrame,
    /// Ethertype (after at most one 802.1Q tag) is not 0x8808.
    NotMacControl,
    /// MAC Control, but the opcode is not PFC (0x0101); 802.3x PAUSE
    /// (0x0001) lands here.
    NotPfc,
    /// The class-enable vector's reserved high byte is not zero.
    ClassVectorReserved,
    /// The class-enable vector enables no priority: the frame asks nothing,
    /// and relaying it would spend WAN capacity outside any priority's
    /// storm ceiling.
    EmptyClassVector,
    /// Destination MAC is not 01-80-C2-00-00-01.
    BadDmac,
    /// Source MAC is neither the configured port MAC nor the system MAC of
    /// the neighbour the frame must come from.
    BadSmac,
    /// From the WAN: well-formed, but not a tunnel packet (another Ethertype,
    /// IP protocol or UDP port). A socket filter should keep it away.
    NotTunnel,
    /// From the WAN: a tunnel packet whose headers do not decode (bad
    /// length, checksum, field value); the last decode error is kept in the
    /// status.
    MalformedTunnel,
    /// From the WAN: a tunnel packet for someone else, or of another kind
    /// than configured (outer destination MAC or address, SID, VNI, label).
    NotForUs,
    /// From the WAN: an SRH with Segments Left above 0 reached us: the packet
    /// is not at its last segment, and `End.DX2` would not decapsulate it
    /// either.
    SegmentsLeft,
}

impl DropReason {
    pub const COUNT: usize = 12;
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::ShortFrame,
        DropReason::LongFrame,
        DropReason::NotMacControl,
        DropReason::NotPfc,
        DropReason::ClassVectorReserved,
        DropReason::EmptyClassVector,
        DropReason::BadDmac,
        DropReason::BadSmac,
        DropReason::NotTunnel,
        DropReason::MalformedTunnel,
        DropReason::NotForUs,
        DropReason::SegmentsLeft,
    ];

    /// The name used in JSON, metrics labels and the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::ShortFrame => "short_frame",
            DropReason::LongFrame => "long_frame",
            DropReason::NotMacControl => "not_mac_control",
            DropReason::NotPfc => "not_pfc",
            DropReason::ClassVectorReserved => "class_vector_reserved",
            DropReason::EmptyClassVector => "empty_class_vector",
            DropReason::BadDmac => "bad_dmac",
            DropReason::BadSmac => "bad_smac",
            DropReason::NotTunnel => "not_tunnel",
            DropReason::MalformedTunnel => "malformed_tunnel",
            DropReason::NotForUs => "not_for_us",
            DropReason::SegmentsLeft => "segments_left",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }

    pub fn from_name(name: &str) -> Option<DropReason> {
        DropReason::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One counter per [`DropReason`]. Serialized as a map from reason name to
/// count, every reason present (zeros included), so a scraper sees a stable
/// set of series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DropCounts([u64; DropReason::COUNT]);

impl DropCounts {
    pub fn add(&mut self, reason: DropReason) {
        let c = &mut self.0[reason.index()];
        *c = c.saturating_add(1);
    }

    /// Adds `n` of `reason` (counts kept elsewhere, such as an XDP map).
    pub fn add_n(&mut self, reason: DropReason, n: u64) {
        let c = &mut self.0[reason.index()];
        *c = c.saturating_add(n);
    }

    /// Adds every count of `other` (counts kept elsewhere, such as an XDP
    /// program's).
    pub fn add_all(&mut self, other: &DropCounts) {
        for (reason, n) in other.iter() {
            self.add_n(reason, n);
        }
    }

    pub fn get(&self, reason: DropReason) -> u64 {
        self.0[reason.index()]
    }

    pub fn total(&self) -> u64 {
        self.0.iter().fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// (reason, count) for every reason, in [`DropReason::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.into_iter().map(|r| (r, self.get(r)))
    }
}

impl Serialize for DropCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(DropReason::COUNT))?;
        for (r, n) in self.iter() {
            m.serialize_entry(r.as_str(), &n)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for DropCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, u64>::deserialize(d)?;
        let mut out = DropCounts::default();
        for (name, n) in map {
            let r = DropReason::from_name(&name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown drop reason {name:?}")))?;
            out.0[r.index()] = n;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_reason_once_in_index_order() {
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(DropReason::from_name(r.as_str()), Some(r));
            // serde's snake_case name is the same as as_str.
            assert_eq!(
                serde_json::to_string(&r).expect("json"),
                format!("\"{}\"", r.as_str())
            );
        }
    }

    #[test]
    fn counts_serialize_as_a_full_map_and_back() {
        let mut c = DropCounts::default();
        c.add(DropReason::BadSmac);
        c.add(DropReason::BadSmac);
        c.add(DropReason::SegmentsLeft);
        assert_eq!(c.total(), 3);
        let json = serde_json::to_value(c).expect("json");
        let map = json.as_object().expect("map");
        assert_eq!(map.len(), DropReason::COUNT);
        assert_eq!(map["bad_smac"], 2);
        assert_eq!(map["segments_left"], 1);
        assert_eq!(map["short_frame"], 0);
        let back: DropCounts = serde_json::from_value(json).expect("back");
        assert_eq!(back, c);
        assert!(serde_json::from_str::<DropCounts>(r#"{"nope": 1}"#).is_err());
    }
}
