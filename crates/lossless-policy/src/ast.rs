//! The parsed QoS policy, independent of the fabric it will be applied to.
//!
//! Both input forms (OpenSM's `qos-policy.conf` and the OFA QoS RFC's XML form `<qos-policy>`) parse
//! into these types. Every item keeps the place it came from so `check` and `explain` can
//! point at it.

use serde::Serialize;

/// A place in a source file: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A value with the place it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spanned<T> {
    pub value: T,
    pub loc: Loc,
}

impl<T> Spanned<T> {
    pub fn new(value: T, loc: Loc) -> Self {
        Self { value, loc }
    }
}

/// An inclusive range `lo..=hi`, already put in order. `reversed` remembers that the file
/// wrote it high-low (OpenSM swaps silently; `check` warns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NumRange {
    pub lo: u64,
    pub hi: u64,
    #[serde(skip)]
    pub reversed: bool,
    #[serde(skip)]
    pub loc: Loc,
}

impl NumRange {
    pub fn contains(&self, v: u64) -> bool {
        self.lo <= v && v <= self.hi
    }
}

/// Membership test over a list of ranges, as OpenSM's `__is_num_in_range_arr`.
pub fn in_ranges(ranges: &[NumRange], v: u64) -> bool {
    ranges.iter().any(|r| r.contains(v))
}

/// Node types a port group can select (`node-type:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NodeTypes {
    pub ca: bool,
    pub switch: bool,
    pub router: bool,
    /// `SELF`: the port the subnet manager runs on.
    pub self_port: bool,
}

impl NodeTypes {
    pub fn is_empty(&self) -> bool {
        !(self.ca || self.switch || self.router || self.self_port)
    }

    /// Adds the type OpenSM's name stands for (CA, SWITCH, ROUTER, SELF or
    /// ALL, any case); false for any other name.
    pub fn add(&mut self, name: &str) -> bool {
        match name.to_ascii_uppercase().as_str() {
            "CA" => self.ca = true,
            "SWITCH" => self.switch = true,
            "ROUTER" => self.router = true,
            "SELF" => self.self_port = true,
            "ALL" => {
                self.ca = true;
                self.switch = true;
                self.router = true;
            }
            _ => return false,
        }
        true
    }
}

/// `port-name: <node description>/P<port>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortName {
    /// The node description as OpenSM will look it up (unquoted blanks removed).
    pub node_desc: String,
    pub port: u64,
    /// The name contained blanks outside quotes, which OpenSM's lexer drops.
    pub had_blank: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortGroup {
    pub name: Spanned<String>,
    pub use_: Option<String>,
    pub port_guids: Vec<NumRange>,
    pub port_names: Vec<Spanned<PortName>>,
    /// `port-name` entries without a `/`: Ethernet interface names (`enp65s0f0`). OpenSM
    /// finds no IB port by such a name and ignores it; `compile --ethernet` configures them.
    pub interfaces: Vec<Spanned<String>>,
    pub pkeys: Vec<NumRange>,
    pub partitions: Vec<Spanned<String>>,
    pub node_types: NodeTypes,
    pub loc: Loc,
}

impl PortGroup {
    /// A group opened at `loc`, nothing read yet (both parsers fill it in).
    pub(crate) fn empty(loc: Loc) -> Self {
        PortGroup {
            name: Spanned::new(String::new(), loc),
            use_: None,
            port_guids: vec![],
            port_names: vec![],
            interfaces: vec![],
            pkeys: vec![],
            partitions: vec![],
            node_types: NodeTypes::default(),
            loc,
        }
    }
}

/// `from:`/`to:` of an SL2VL scope (and `to` of a VLArb scope in the XML form).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub enum PortSet {
    /// Not written: every port.
    #[default]
    Unspecified,
    /// `*`
    All,
    List(Vec<NumRange>),
}

impl PortSet {
    pub fn contains(&self, port: u64) -> bool {
        match self {
            PortSet::Unspecified | PortSet::All => true,
            PortSet::List(r) => in_ranges(r, port),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sl2VlScope {
    pub groups: Vec<Spanned<String>>,
    pub across_from: Vec<Spanned<String>>,
    pub across_to: Vec<Spanned<String>>,
    pub from: PortSet,
    pub to: PortSet,
    pub table: [u8; 16],
    pub table_loc: Loc,
    pub loc: Loc,
}

impl Sl2VlScope {
    /// A scope opened at `loc`, nothing read yet.
    pub(crate) fn empty(loc: Loc) -> Self {
        Sl2VlScope {
            groups: vec![],
            across_from: vec![],
            across_to: vec![],
            from: PortSet::Unspecified,
            to: PortSet::Unspecified,
            table: [0; 16],
            table_loc: loc,
            loc,
        }
    }
}

/// One `VL:weight` entry of a VLArb table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VlWeight {
    pub vl: u64,
    pub weight: u64,
    #[serde(skip)]
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VlArbScope {
    pub groups: Vec<Spanned<String>>,
    pub across: Vec<Spanned<String>>,
    pub to: PortSet,
    pub high: Option<Vec<VlWeight>>,
    pub low: Option<Vec<VlWeight>>,
    pub high_limit: Option<Spanned<u64>>,
    pub loc: Loc,
}

impl VlArbScope {
    /// A scope opened at `loc`, nothing read yet.
    pub(crate) fn empty(loc: Loc) -> Self {
        VlArbScope {
            groups: vec![],
            across: vec![],
            to: PortSet::Unspecified,
            high: None,
            low: None,
            high_limit: None,
            loc,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QosLevel {
    pub name: Spanned<String>,
    pub use_: Option<String>,
    pub sl: Spanned<u64>,
    pub mtu_limit: Option<Spanned<u64>>,
    pub rate_limit: Option<Spanned<u64>>,
    pub packet_life: Option<Spanned<u64>>,
    pub path_bits: Vec<NumRange>,
    pub pkeys: Vec<NumRange>,
    /// Extension (`lossless: yes` in a qos-level, `<lossless/>` in the XML form, or
    /// `compile --lossless LEVEL`): the level carries lossless traffic, so its priority gets
    /// PFC when the policy is compiled for Ethernet. IB has no equivalent; OpenSM rejects
    /// the keyword.
    pub lossless: bool,
    pub loc: Loc,
}

impl QosLevel {
    /// A level opened at `loc`, nothing read yet (name and SL are set when the level ends).
    pub(crate) fn empty(loc: Loc) -> Self {
        QosLevel {
            name: Spanned::new(String::new(), loc),
            use_: None,
            sl: Spanned::new(0, loc),
            mtu_limit: None,
            rate_limit: None,
            packet_life: None,
            path_bits: vec![],
            pkeys: vec![],
            lossless: false,
            loc,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatchRule {
    pub use_: Option<String>,
    pub qos_class: Vec<NumRange>,
    pub source: Vec<Spanned<String>>,
    pub destination: Vec<Spanned<String>>,
    pub service_id: Vec<NumRange>,
    pub pkey: Vec<NumRange>,
    pub level: Spanned<String>,
    pub loc: Loc,
}

impl MatchRule {
    /// A rule opened at `loc`, nothing read yet (its level is set when the rule ends).
    pub(crate) fn empty(loc: Loc) -> Self {
        MatchRule {
            use_: None,
            qos_class: vec![],
            source: vec![],
            destination: vec![],
            service_id: vec![],
            pkey: vec![],
            level: Spanned::new(String::new(), loc),
            loc,
        }
    }
}

/// The ULP a `qos-ulps` line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UlpKind {
    Sdp,
    SdpPort,
    Rds,
    RdsPort,
    Iser,
    IserPort,
    SrpTargetGuid,
    Ipoib,
    IpoibPkey,
    AnyServiceId,
    AnyPkey,
    AnyTargetGuid,
    AnySourceGuid,
    AnySourceTargetGuid,
}

/// A `qos-ulps` line other than `default`, already expanded to the criteria OpenSM matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UlpRule {
    pub kind: UlpKind,
    pub service_id: Vec<NumRange>,
    pub pkey: Vec<NumRange>,
    pub source_guids: Vec<NumRange>,
    pub dest_guids: Vec<NumRange>,
    pub sl: Spanned<u64>,
    /// The line as written, for explain output.
    pub text: String,
    pub loc: Loc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectionKind {
    PortGroups,
    QosSetup,
    QosLevels,
    QosMatchRules,
    QosUlps,
}

/// A whole policy file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Policy {
    pub port_groups: Vec<PortGroup>,
    pub sl2vl_scopes: Vec<Sl2VlScope>,
    pub vlarb_scopes: Vec<VlArbScope>,
    pub levels: Vec<QosLevel>,
    pub rules: Vec<MatchRule>,
    pub ulps: Vec<UlpRule>,
    /// `default : SL` in `qos-ulps`.
    pub ulp_default: Option<Spanned<u64>>,
    pub sections: Vec<(SectionKind, Loc)>,
    /// Numbers written with a leading zero, which OpenSM reads as octal.
    pub octal_numbers: Vec<Spanned<String>>,
    /// Keywords of ours in the OpenSM form (`lossless:`) that make OpenSM reject the file.
    pub extensions: Vec<Spanned<String>>,
}

/// Case-insensitive name lookups built once (first definition wins, as in OpenSM), for
/// policies with thousands of groups where a linear search per reference adds up.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    groups: std::collections::HashMap<String, usize>,
    levels: std::collections::HashMap<String, usize>,
}

impl NameIndex {
    pub fn group(&self, name: &str) -> Option<usize> {
        self.groups.get(&name.to_ascii_lowercase()).copied()
    }

    pub fn level(&self, name: &str) -> Option<usize> {
        self.levels.get(&name.to_ascii_lowercase()).copied()
    }
}

impl Policy {
    /// Index of group and level names; same answers as [`Policy::group`] and
    /// [`Policy::level`].
    pub fn names(&self) -> NameIndex {
        let mut ix = NameIndex::default();
        for (i, g) in self.port_groups.iter().enumerate() {
            ix.groups
                .entry(g.name.value.to_ascii_lowercase())
                .or_insert(i);
        }
        for (i, l) in self.levels.iter().enumerate() {
            ix.levels
                .entry(l.name.value.to_ascii_lowercase())
                .or_insert(i);
        }
        ix
    }

    /// Port group by name, case-insensitively and first definition first, as OpenSM looks
    /// them up.
    pub fn group(&self, name: &str) -> Option<(usize, &PortGroup)> {
        self.port_groups
            .iter()
            .enumerate()
            .find(|(_, g)| g.name.value.eq_ignore_ascii_case(name))
    }

    /// QoS level by name, case-insensitively, first definition wins.
    pub fn level(&self, name: &str) -> Option<(usize, &QosLevel)> {
        self.levels
            .iter()
            .enumerate()
            .find(|(_, l)| l.name.value.eq_ignore_ascii_case(name))
    }
}
