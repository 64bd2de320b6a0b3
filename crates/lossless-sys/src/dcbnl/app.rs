//! IEEE 802.1Qaz application priorities (`struct dcb_app`) and the selector
//! trust order, as they travel in the `DCB_ATTR_IEEE` nest:
//!
//! * `DCB_ATTR_IEEE_APP_TABLE { DCB_ATTR_IEEE_APP: struct dcb_app, ... }` in
//!   `IEEE_SET` (add), `IEEE_DEL` (remove exactly the entries listed) and the
//!   `IEEE_GET` reply. An entry with the non-standard PCP selector (255)
//!   travels as `DCB_ATTR_DCB_APP` instead (`dcbnl_app_attr_type_get()`).
//! * `DCB_ATTR_DCB_APP_TRUST_TABLE { u8 selector, ... }` (Linux 6.2 and
//!   later), in the order the driver trusts them, each attribute typed the
//!   same way. The kernel reports the nest in `IEEE_GET` only for a driver
//!   with `dcbnl_getapptrust`; a kernel older than the attribute ignores it in
//!   `IEEE_SET` without a word, so support is learned from `IEEE_GET` first.
//!
//! The kernel adds an entry only if the same (selector, protocol, priority)
//! is not there (`-EEXIST` otherwise) and removes only one that is
//! (`-ENOENT`); it stops at the first entry that fails, having applied the
//! ones before it.

use std::fmt;

use super::error::DcbError;
use crate::netlink::{self, Attr, MsgBuilder, NetlinkError};

/// In the IEEE nest: the APP table (nested entries).
pub(crate) const DCB_ATTR_IEEE_APP_TABLE: u16 = 3;
/// In the IEEE nest: the peer's APP table (firmware agents; read only).
pub(crate) const DCB_ATTR_IEEE_PEER_APP: u16 = 6;
/// In the IEEE nest: the selector trust order (Linux 6.2+).
pub(crate) const DCB_ATTR_DCB_APP_TRUST_TABLE: u16 = 11;
/// An entry (or trust selector) with an IEEE selector (1..=5).
pub(crate) const DCB_ATTR_IEEE_APP: u16 = 1;
/// An entry (or trust selector) with a non-standard selector (PCP, 255).
pub(crate) const DCB_ATTR_DCB_APP: u16 = 2;
/// `sizeof(struct dcb_app)`: selector u8, priority u8, protocol u16.
pub(crate) const DCB_APP_LEN: usize = 4;

/// An APP selector (`IEEE_8021QAZ_APP_SEL_*`, `DCB_APP_SEL_PCP`): what the
/// protocol field of a [`DcbApp`] means. Open: unknown values read from the
/// kernel are kept as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AppSelector(pub u8);

impl AppSelector {
    /// Protocol is an Ethertype.
    pub const ETHERTYPE: AppSelector = AppSelector(1);
    /// Protocol is a TCP or SCTP port.
    pub const STREAM: AppSelector = AppSelector(2);
    /// Protocol is a UDP or DCCP port.
    pub const DGRAM: AppSelector = AppSelector(3);
    /// Protocol is a TCP, SCTP, UDP or DCCP port.
    pub const ANY: AppSelector = AppSelector(4);
    /// Protocol is a DSCP value, 0..=63 (IEEE 802.1Qcd).
    pub const DSCP: AppSelector = AppSelector(5);
    /// Linux's own selector for the VLAN tag's PCP (and DEI): protocol
    /// 0..=15. Not an IEEE 802.1Qaz code point; never sent on the wire.
    pub const PCP: AppSelector = AppSelector(255);

    /// The attribute type an entry or trust selector of this selector
    /// travels as; `None` for a selector the kernel refuses.
    pub(crate) fn attr_type(self) -> Option<u16> {
        match self.0 {
            1..=5 => Some(DCB_ATTR_IEEE_APP),
            255 => Some(DCB_ATTR_DCB_APP),
            _ => None,
        }
    }

    /// The largest protocol value the selector allows.
    fn max_protocol(self) -> u16 {
        match self {
            AppSelector::DSCP => 63,
            AppSelector::PCP => 15,
            _ => u16::MAX,
        }
    }

    fn name(self) -> Option<&'static str> {
        Some(match self {
            AppSelector::ETHERTYPE => "ethertype",
            AppSelector::STREAM => "stream-port",
            AppSelector::DGRAM => "dgram-port",
            AppSelector::ANY => "port",
            AppSelector::DSCP => "dscp",
            AppSelector::PCP => "pcp",
            _ => return None,
        })
    }
}

impl fmt::Display for AppSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "selector {}", self.0),
        }
    }
}

/// `struct dcb_app`: traffic that `selector` and `protocol` identify gets
/// `priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DcbApp {
    pub selector: AppSelector,
    /// The 802.1p priority, 0..=7.
    pub priority: u8,
    /// Ethertype, port, DSCP or PCP, as `selector` says.
    pub protocol: u16,
}

impl fmt::Display for DcbApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} -> priority {}",
            self.selector, self.protocol, self.priority
        )
    }
}

impl DcbApp {
    /// Refuses what the kernel would (`-EINVAL` for a selector it does not
    /// know) or a driver cannot hold (a priority past 7, a DSCP past 63, a
    /// PCP/DEI past 15).
    pub fn check(&self) -> Result<(), String> {
        if self.selector.attr_type().is_none() {
            return Err(format!(
                "APP entry {self}: selector {} is neither IEEE 802.1Qaz (1..=5) nor PCP (255)",
                self.selector.0
            ));
        }
        if self.priority > 7 {
            return Err(format!("APP entry {self}: priority is 0..=7"));
        }
        if self.protocol > self.selector.max_protocol() {
            return Err(format!(
                "APP entry {self}: {} is 0..={}",
                self.selector,
                self.selector.max_protocol()
            ));
        }
        Ok(())
    }

    pub(crate) fn to_bytes(self) -> [u8; DCB_APP_LEN] {
        let p = self.protocol.to_ne_bytes();
        [self.selector.0, self.priority, p[0], p[1]]
    }
}

/// Checks a list of APP entries to send: not empty, each valid.
pub(crate) fn check_apps(apps: &[DcbApp]) -> Result<(), DcbError> {
    if apps.is_empty() {
        return Err(DcbError::Invalid("an empty APP table".into()));
    }
    apps.iter()
        .try_for_each(DcbApp::check)
        .map_err(DcbError::Invalid)
}

/// Checks a trust order to send: each selector known, none twice.
pub(crate) fn check_trust(order: &[AppSelector]) -> Result<(), DcbError> {
    for (i, s) in order.iter().enumerate() {
        if s.attr_type().is_none() {
            return Err(DcbError::Invalid(format!(
                "trust order: selector {} is neither IEEE 802.1Qaz (1..=5) nor PCP (255)",
                s.0
            )));
        }
        if order.get(..i).is_some_and(|before| before.contains(s)) {
            return Err(DcbError::Invalid(format!("trust order: {s} twice")));
        }
    }
    Ok(())
}

/// Appends `DCB_ATTR_IEEE_APP_TABLE { entries }` (checked by the caller).
pub(crate) fn put_app_table(b: &mut MsgBuilder, apps: &[DcbApp]) {
    let n = b.nest_start(DCB_ATTR_IEEE_APP_TABLE);
    for app in apps {
        if let Some(ty) = app.selector.attr_type() {
            b.attr(ty, &app.to_bytes());
        }
    }
    b.nest_end(n);
}

/// Appends `DCB_ATTR_DCB_APP_TRUST_TABLE { selectors }` (checked by the
/// caller).
pub(crate) fn put_trust_table(b: &mut MsgBuilder, order: &[AppSelector]) {
    let n = b.nest_start(DCB_ATTR_DCB_APP_TRUST_TABLE);
    for s in order {
        if let Some(ty) = s.attr_type() {
            b.attr_u8(ty, s.0);
        }
    }
    b.nest_end(n);
}

/// The entries of an APP table nest: `DCB_ATTR_IEEE_APP` and (unless
/// `ieee_only`, as in the peer's table) `DCB_ATTR_DCB_APP`, each at least a
/// `struct dcb_app`; other attribute types are skipped.
pub(crate) fn decode_app_table(
    nest: &Attr<'_>,
    what: &'static str,
    ieee_only: bool,
) -> Result<Vec<DcbApp>, NetlinkError> {
    let mut apps = Vec::new();
    for a in nest.nested() {
        let a = a?;
        if a.ty != DCB_ATTR_IEEE_APP && (ieee_only || a.ty != DCB_ATTR_DCB_APP) {
            continue;
        }
        if a.payload.len() < DCB_APP_LEN {
            return Err(NetlinkError::new(
                a.offset,
                what,
                format!(
                    "APP entry of {} bytes, struct dcb_app needs {DCB_APP_LEN}",
                    a.payload.len()
                ),
            ));
        }
        apps.push(DcbApp {
            selector: AppSelector(a.payload.first().copied().unwrap_or_default()),
            priority: a.payload.get(1).copied().unwrap_or_default(),
            protocol: netlink::ne_u16(a.payload, 2).unwrap_or_default(),
        });
    }
    Ok(apps)
}

/// The selectors of a trust table nest, in order: u8 attributes of type
/// `DCB_ATTR_IEEE_APP` or `DCB_ATTR_DCB_APP`; other types are skipped.
pub(crate) fn decode_trust_table(nest: &Attr<'_>) -> Result<Vec<AppSelector>, NetlinkError> {
    let mut order = Vec::new();
    for a in nest.nested() {
        let a = a?;
        if a.ty == DCB_ATTR_IEEE_APP || a.ty == DCB_ATTR_DCB_APP {
            order.push(AppSelector(a.u8("DCB_ATTR_DCB_APP_TRUST_TABLE")?));
        }
    }
    Ok(order)
}
