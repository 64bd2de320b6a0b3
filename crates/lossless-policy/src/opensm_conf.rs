//! The QoS part of OpenSM's options file (`opensm.conf`), read as OpenSM 3.3 reads it, and the
//! SL2VL and VL arbitration tables OpenSM builds from it for each kind of port.
//!
//! OpenSM reads a line as a key and the rest of the line (blanks and quotes trimmed, `#`
//! comments cut); the last line of a key wins. Its `qos_*` tables are strings it parses
//! later, number by number, with C's `strtoul` (decimal, `0x` hex, `0` octal, `-1` wrapping
//! round) and no check: a VLArb entry's VL is taken modulo 15, its weight cut to 8 bits;
//! an SL2VL value to 4 bits; 16 VLArb entries and 16 SL2VL values are read, missing ones are
//! 0 and extra ones ignored. OpenSM only logs a warning for these. We build exactly the
//! tables it builds and say, for every such line, what it programs
//! ([`OsmQos::diags`], `PATH:LINE: warning: ...`).

use serde::Serialize;

/// OpenSM's built-in tables (osm_base.h), used when opensm.conf sets none.
pub const DEFAULT_VLARB_HIGH: &str =
    "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0";
pub const DEFAULT_VLARB_LOW: &str =
    "0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4";
pub const DEFAULT_SL2VL: &str = "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7";
/// OpenSM's default `max_op_vls`: VL0-14.
pub const DEFAULT_MAX_OP_VLS: u8 = 5;
/// OpenSM's default `subnet_timeout`.
pub const DEFAULT_SUBNET_TIMEOUT: u8 = 18;

/// One set of `qos_*` options (generic, or for one kind of port), as OpenSM keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TypeOptions {
    /// `qos_*high_limit`, when set to 0-255 (OpenSM ignores other values).
    pub high_limit: Option<u8>,
    pub vlarb_high: Option<String>,
    pub vlarb_low: Option<String>,
    pub sl2vl: Option<String>,
}

/// The kinds of port OpenSM programs differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PortKind {
    Ca,
    /// A switch's (enhanced) port 0.
    Sw0,
    /// A switch's external ports.
    Swe,
    Router,
}

/// The tables OpenSM builds for one kind of port (`struct qos_config`): 16 VLArb entries
/// per table (two blocks of 8), the SL2VL table, the high limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QosConfig {
    pub vlarb_high: [(u8, u8); 16],
    pub vlarb_low: [(u8, u8); 16],
    pub sl2vl: [u8; 16],
    pub high_limit: u8,
}

/// A warning about a line of opensm.conf.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfDiag {
    pub line: usize,
    pub message: String,
}

/// The QoS part of `opensm.conf`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OsmQos {
    /// `qos TRUE`: without it OpenSM programs no table and applies no policy.
    pub qos: bool,
    pub generic: TypeOptions,
    pub ca: TypeOptions,
    pub sw0: TypeOptions,
    pub swe: TypeOptions,
    pub rtr: TypeOptions,
    pub subnet_timeout: u8,
    /// `max_op_vls`: the OperationalVLs enum OpenSM caps every port at (1: VL0, 2: VL0-1,
    /// 3: VL0-3, 4: VL0-7, 5: VL0-14).
    pub max_op_vls: u8,
    /// The line that set `max_op_vls`.
    pub max_op_vls_line: Option<usize>,
    /// What OpenSM does with the lines it takes otherwise than written.
    pub diags: Vec<ConfDiag>,
}

impl Default for OsmQos {
    /// No options file: QoS on (a policy is being applied), OpenSM's defaults otherwise.
    fn default() -> Self {
        OsmQos {
            qos: true,
            generic: TypeOptions::default(),
            ca: TypeOptions::default(),
            sw0: TypeOptions::default(),
            swe: TypeOptions::default(),
            rtr: TypeOptions::default(),
            subnet_timeout: DEFAULT_SUBNET_TIMEOUT,
            max_op_vls: DEFAULT_MAX_OP_VLS,
            max_op_vls_line: None,
            diags: vec![],
        }
    }
}

/// C's `strtoul(s, &end, 0)`: the value (wrapped as glibc does for a leading `-`, clamped to
/// `u64::MAX` on overflow) and how many bytes it read (0 when no digits: `end == s`).
pub fn c_strtoul(s: &[u8]) -> (u64, usize) {
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let hex_digit = |c: u8| (c as char).is_ascii_hexdigit();
    let (base, start) = if i + 1 < s.len()
        && s[i] == b'0'
        && (s[i + 1] == b'x' || s[i + 1] == b'X')
        && s.get(i + 2).is_some_and(|c| hex_digit(*c))
    {
        (16u32, i + 2)
    } else if i < s.len() && s[i] == b'0' {
        (8, i)
    } else {
        (10, i)
    };
    let mut j = start;
    let mut v: u64 = 0;
    let mut overflow = false;
    while j < s.len() {
        let Some(d) = (s[j] as char).to_digit(base) else {
            break;
        };
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        j += 1;
    }
    if j == start {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, j);
    }
    (if neg { v.wrapping_neg() } else { v }, j)
}

/// osm_qos.c's `parse_one_unsigned`: a number as `unsigned` (32 bits) and the bytes to skip:
/// the number and whatever one character follows it (the delimiter is not checked).
fn parse_one_unsigned(s: &[u8]) -> (u32, usize) {
    let (v, n) = c_strtoul(s);
    let skip = if n < s.len() { n + 1 } else { n };
    (v as u32, skip)
}

/// osm_qos.c's parse of 16 `vl:weight` entries.
pub fn vlarb_entries(s: &str) -> [(u8, u8); 16] {
    let b = s.as_bytes();
    let mut p = 0;
    let mut out = [(0u8, 0u8); 16];
    for e in &mut out {
        let (vl, n) = parse_one_unsigned(&b[p.min(b.len())..]);
        p += n;
        let (w, n) = parse_one_unsigned(&b[p.min(b.len())..]);
        p += n;
        *e = ((vl % 15) as u8, w as u8);
    }
    out
}

/// osm_qos.c's parse of 16 SL2VL values (each cut to 4 bits).
pub fn sl2vl_entries(s: &str) -> [u8; 16] {
    let b = s.as_bytes();
    let mut p = 0;
    let mut out = [0u8; 16];
    for v in &mut out {
        let (x, n) = parse_one_unsigned(&b[p.min(b.len())..]);
        p += n;
        *v = (x & 0xf) as u8;
    }
    out
}

/// OpenSM's `clean_val`: blanks around the value and one pair of surrounding quotes removed.
fn clean_val(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// `opts_strtoul`: the whole value must be a number no larger than `max`.
fn whole_number(v: &str, max: u64) -> Option<u64> {
    let (n, used) = c_strtoul(v.as_bytes());
    (!v.is_empty() && used == v.len() && n <= max).then_some(n)
}

impl OsmQos {
    /// Read the QoS keys (`qos`, `qos_*`, `max_op_vls`, `subnet_timeout`) of an opensm.conf;
    /// other keys are OpenSM's business. Never fails: what OpenSM would take otherwise than
    /// written is in [`OsmQos::diags`].
    pub fn parse(src: &str) -> OsmQos {
        let mut o = OsmQos {
            qos: false,
            ..OsmQos::default()
        };
        let mut qos_line = None;
        for (i, raw) in src.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("");
            let t = line.trim_start_matches([' ', '\t']);
            let key_len = t.find([' ', '\t']).unwrap_or(t.len());
            let (k, rest) = t.split_at(key_len);
            if k.is_empty() {
                continue;
            }
            o.option(i + 1, k, clean_val(rest), &mut qos_line);
        }
        if !o.qos {
            let line = qos_line.unwrap_or(1);
            o.warn(
                line,
                "QoS is off (no `qos TRUE`): OpenSM then programs no SL2VL or VLArb table and \
                 answers PathRecords without the policy"
                    .into(),
            );
        }
        o
    }

    fn warn(&mut self, line: usize, message: String) {
        self.diags.push(ConfDiag { line, message });
    }

    /// One `key value` line.
    fn option(&mut self, line: usize, k: &str, v: &str, qos_line: &mut Option<usize>) {
        match k {
            "qos" => {
                self.qos = v == "TRUE";
                *qos_line = Some(line);
            }
            "subnet_timeout" => match whole_number(v, 255) {
                Some(n) => self.subnet_timeout = n as u8,
                None => self.warn(line, format!("subnet_timeout `{v}` is not a number from 0 to 255: OpenSM ignores the line")),
            },
            "routing_engine" => {
                // Engines with a path_sl (and torus-2QoS an update_sl2vl) hook choose SLs
                // and SL2VL tables themselves.
                let choosing: Vec<&str> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|e| ["lash", "dfsssp", "torus-2QoS", "nue"].contains(e))
                    .collect();
                if !choosing.is_empty() {
                    self.warn(line, format!("routing_engine {}: that engine chooses each path's SL (and torus-2QoS the SL2VL tables) itself when it routes; resolve and compile do not model it, their SLs and tables are the ones OpenSM's QoS alone would give", choosing.join(", ")));
                }
            }
            "max_op_vls" => match whole_number(v, 255) {
                Some(n) => {
                    self.max_op_vls = n as u8;
                    self.max_op_vls_line = Some(line);
                    if !(1..=5).contains(&n) {
                        self.warn(line, format!("max_op_vls {n} is outside 1-5: OpenSM caps every port's operational VLs at it (0 leaves its VL mask undefined)"));
                    }
                }
                None => self.warn(line, format!("max_op_vls `{v}` is not a number from 0 to 255: OpenSM ignores the line")),
            },
            _ => {
                if let Some(rest) = k.strip_prefix("qos_") {
                    self.qos_option(line, k, rest, v);
                }
            }
        }
    }

    /// `qos_[ca_|sw0_|swe_|rtr_]{high_limit,vlarb_high,vlarb_low,sl2vl,max_vls}`.
    fn qos_option(&mut self, line: usize, key: &str, rest: &str, v: &str) {
        let (kind, field) = match rest.split_once('_') {
            Some(("ca", f)) => ("ca", f),
            Some(("sw0", f)) => ("sw0", f),
            Some(("swe", f)) => ("swe", f),
            Some(("rtr", f)) => ("rtr", f),
            _ => ("", rest),
        };
        let diags = match field {
            "vlarb_high" | "vlarb_low" => vlarb_diags(key, v),
            "sl2vl" => sl2vl_diags(key, v),
            "high_limit" => vec![],
            "max_vls" => {
                let (n, used) = c_strtoul(v.as_bytes());
                if used != v.len() || n == 0 || n > 15 {
                    vec![format!("{key} `{v}` is not 1-15: OpenSM uses its default (and programs no table from it)")]
                } else {
                    vec![]
                }
            }
            "policy_file" | "" => return,
            _ => return,
        };
        for d in diags {
            self.warn(line, d);
        }
        let t = match kind {
            "ca" => &mut self.ca,
            "sw0" => &mut self.sw0,
            "swe" => &mut self.swe,
            "rtr" => &mut self.rtr,
            _ => &mut self.generic,
        };
        let text = (v != "(null)").then(|| v.to_string());
        match field {
            "vlarb_high" => t.vlarb_high = text,
            "vlarb_low" => t.vlarb_low = text,
            "sl2vl" => t.sl2vl = text,
            "high_limit" => {
                // opts_parse_int32 (strtol, garbage read as far as it goes), then only 0-255
                // counts.
                let n = c_strtol(v);
                t.high_limit = u8::try_from(n).ok();
                if !(0..=255).contains(&n) {
                    self.diags.push(ConfDiag {
                        line,
                        message: format!("{key} {n} is outside 0-255: OpenSM ignores it"),
                    });
                }
            }
            _ => {}
        }
    }

    /// Warnings that need the fabric: a `max_op_vls` below what switch ports operate, which
    /// OpenSM applies to their tables only from its second heavy sweep on.
    pub fn fabric_diags(&self, fabric: &crate::fabric::Fabric) -> Vec<ConfDiag> {
        let Some(line) = self.max_op_vls_line else {
            return vec![];
        };
        let cap = fabric
            .nodes
            .iter()
            .filter(|n| n.kind == crate::fabric::NodeKind::Switch)
            .flat_map(|n| n.ports.iter().map(|p| vls_enum(p.data_vls)))
            .max()
            .unwrap_or(0);
        if cap <= self.max_op_vls {
            return vec![];
        }
        vec![ConfDiag {
            line,
            message: format!(
                "max_op_vls {}: OpenSM programs switch ports' SL2VL and VLArb tables before it \
                 lowers their operational VLs, so its first sweep masks their VLs to what they \
                 operate then (VL0-{}) and only a later heavy sweep to max_op_vls; compile \
                 and resolve give the first sweep's tables (CA and router ports get max_op_vls \
                 at once)",
                self.max_op_vls,
                vl_mask(cap)
            ),
        }]
    }

    fn options(&self, kind: PortKind) -> &TypeOptions {
        match kind {
            PortKind::Ca => &self.ca,
            PortKind::Sw0 => &self.sw0,
            PortKind::Swe => &self.swe,
            PortKind::Router => &self.rtr,
        }
    }

    /// `qos_build_config`: the kind's option, else the generic one, else OpenSM's built-in.
    pub fn config(&self, kind: PortKind) -> QosConfig {
        let o = self.options(kind);
        let g = &self.generic;
        let pick = |a: &Option<String>, b: &Option<String>, d: &'static str| -> String {
            a.clone()
                .or_else(|| b.clone())
                .unwrap_or_else(|| d.to_string())
        };
        QosConfig {
            vlarb_high: vlarb_entries(&pick(&o.vlarb_high, &g.vlarb_high, DEFAULT_VLARB_HIGH)),
            vlarb_low: vlarb_entries(&pick(&o.vlarb_low, &g.vlarb_low, DEFAULT_VLARB_LOW)),
            sl2vl: sl2vl_entries(&pick(&o.sl2vl, &g.sl2vl, DEFAULT_SL2VL)),
            high_limit: o.high_limit.or(g.high_limit).unwrap_or(0),
        }
    }
}

/// `strtol(v, NULL, 0)` as an `int32_t`.
fn c_strtol(v: &str) -> i64 {
    let b = v.trim_start().as_bytes();
    let neg = b.first() == Some(&b'-');
    let (n, _) = c_strtoul(if neg { &b[1..] } else { b });
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    i64::from(if neg { -n } else { n } as i32)
}

/// The tokens of a table as OpenSM's own check splits them (at commas).
fn tokens(v: &str) -> Vec<&str> {
    v.split([',', '\n']).filter(|t| !t.is_empty()).collect()
}

/// What OpenSM programs for a `qos_*vlarb_*` value that is not 0-14:0-255 pairs.
fn vlarb_diags(key: &str, v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let toks = tokens(v);
    for t in &toks {
        let Some((vl, w)) = t.split_once(':') else {
            out.push(format!("{key}: `{t}` is not VL:weight: OpenSM reads the numbers in a row regardless of separators"));
            continue;
        };
        let (vl, w) = (vl.trim(), w.trim());
        let (vn, vu) = c_strtoul(vl.as_bytes());
        let (wn, wu) = c_strtoul(w.as_bytes());
        if vu != vl.len() || wu != w.len() {
            out.push(format!("{key}: `{t}` is not VL:weight: OpenSM reads the numbers in a row regardless of separators"));
            continue;
        }
        let vn32 = vn as u32;
        if vn > 14 {
            out.push(format!(
                "{key}: VL `{vl}` is outside 0-14: OpenSM programs VL {} (modulo 15, then masked to each port's operational VLs)",
                vn32 % 15
            ));
        }
        if wn > 255 {
            out.push(format!(
                "{key}: weight `{w}` is outside 0-255: OpenSM programs {} (its low 8 bits)",
                wn as u32 as u8
            ));
        }
    }
    if toks.len() > 8 {
        out.push(format!(
            "{key}: {} entries: OpenSM programs the first 8 on ports whose table holds 8 (the rest only on larger tables, 16 at most)",
            toks.len()
        ));
    }
    out
}

/// What OpenSM programs for a `qos_*sl2vl` value that is not 16 VLs 0-15.
fn sl2vl_diags(key: &str, v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let toks = tokens(v);
    for t in &toks {
        let t = t.trim();
        let (n, used) = c_strtoul(t.as_bytes());
        if used != t.len() {
            out.push(format!("{key}: `{t}` is not a VL: OpenSM reads the numbers in a row regardless of separators"));
        } else if n > 15 {
            out.push(format!(
                "{key}: VL `{t}` is outside 0-15: OpenSM programs VL {} (its low 4 bits)",
                n as u32 & 0xf
            ));
        }
    }
    if toks.len() < 16 {
        out.push(format!(
            "{key}: {} VLs for 16 SLs: OpenSM maps SL{}-15 to VL0",
            toks.len(),
            toks.len()
        ));
    } else if toks.len() > 16 {
        out.push(format!(
            "{key}: {} VLs for 16 SLs: OpenSM ignores the ones past the 16th",
            toks.len()
        ));
    }
    out
}

/// The OperationalVLs enum's VL mask (`(1 << (op_vls - 1)) - 1`; 0 is undefined in OpenSM,
/// taken here as VL0 only).
pub fn vl_mask(op_vls: u8) -> u8 {
    match op_vls {
        0 | 1 => 0,
        n => ((1u16 << (n.min(5) - 1)) - 1) as u8,
    }
}

/// Data VLs (1, 2, 4, 8, 15) as the VLCap / OperationalVLs enum (1-5).
pub fn vls_enum(data_vls: u8) -> u8 {
    match data_vls {
        15.. => 5,
        8..=14 => 4,
        4..=7 => 3,
        2..=3 => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoul_as_c() {
        assert_eq!(c_strtoul(b"010"), (8, 3));
        assert_eq!(c_strtoul(b"0x1f:"), (31, 4));
        assert_eq!(c_strtoul(b" 12,"), (12, 3));
        assert_eq!(c_strtoul(b"-1"), (u64::MAX, 2));
        assert_eq!(c_strtoul(b"abc"), (0, 0));
        assert_eq!(c_strtoul(b"0x"), (0, 1));
        assert_eq!(c_strtoul(b"09"), (0, 1));
    }

    #[test]
    fn tables_as_opensm_builds_them() {
        let v = vlarb_entries("0:300,8:1,15:4,16:5,0x1f:6,010:7");
        assert_eq!(
            &v[..7],
            &[(0, 44), (8, 1), (0, 4), (1, 5), (1, 6), (8, 7), (0, 0)]
        );
        let s = sl2vl_entries("0,1,16,20,15");
        assert_eq!(&s[..6], &[0, 1, 0, 4, 15, 0]);
        let o = OsmQos::parse("qos TRUE\nqos_vlarb_low 0:300\nqos_sl2vl 1,2\n");
        assert!(o.qos);
        assert_eq!(o.diags.len(), 2, "{:?}", o.diags);
        assert!(o.diags[0].message.contains("programs 44"), "{:?}", o.diags);
        assert!(
            o.diags[1].message.contains("SL2-15 to VL0"),
            "{:?}",
            o.diags
        );
        let o = OsmQos::parse("qos TRUE\nrouting_engine updn,dfsssp\n");
        assert_eq!(o.diags.len(), 1, "{:?}", o.diags);
        assert!(
            o.diags[0].message.starts_with("routing_engine dfsssp:"),
            "{:?}",
            o.diags
        );
        assert!(OsmQos::parse("qos TRUE\nrouting_engine minhop\n")
            .diags
            .is_empty());
    }
}
