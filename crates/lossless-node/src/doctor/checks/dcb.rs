//! The checks of what DCB negotiates and the NIC holds: RoCE's class, DCBX, PFC at both
//! ends, the APP entries, the NIC's read-back, its trust order.

use super::*;

impl Ctx<'_> {
    pub(super) fn roce_class(&self) -> Verdict {
        if let Some(c) = &self.class {
            return ok(format!("RoCE runs on {}", c.words()));
        }
        let cnp = self.f.host.cnp_dscp.value().copied().unwrap_or(48);
        if let Some(d) = self.d {
            let apps = class::rule_entries(&d.dcbx.app_rules);
            return problem(
                format!(
                    "the APP entries of the configuration losslessd runs send neither udp 4791 \
                     nor a DSCP other than the CNPs' ({cnp}) to a PFC priority: RoCE traffic is \
                     not classified (entries: {})",
                    entries_text(&apps)
                ),
                format!(
                    "lossless profile roce --port {} --apply-to-daemon (RoCEv2 on priority 3, \
                     DSCP 26), or lossless dcbx set {} app add dscp 26 3",
                    self.port(),
                    self.port()
                ),
            );
        }
        let (why, fix) = self.daemon_missing();
        match &self.f.nic {
            Reading::Value(n) => problem(
                format!(
                    "{why}; the NIC's APP table sends neither udp 4791 nor a DSCP other than \
                     the CNPs' ({cnp}) to a PFC priority (entries: {}): RoCE traffic is not \
                     classified",
                    entries_text(&n.state.apps)
                ),
                format!(
                    "dcb app add dev {p} dscp-prio 26:3 and dcb pfc set dev {p} prio-pfc 3:on \
                     (RoCEv2 on priority 3, DSCP 26), or run losslessd with `lossless profile \
                     roce --port {p}`; --priority and --dscp name the class if it is set \
                     elsewhere",
                    p = self.port()
                ),
            ),
            r => unknown(
                format!(
                    "{why}; the NIC's APP table {}: RoCE's priority is not known",
                    reading_why(r)
                ),
                format!("{fix}, or give the class with --priority and --dscp"),
            ),
        }
    }

    pub(super) fn dcbx(&self) -> Verdict {
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            let mut e = format!("{why}: what DCBX agreed with the peer is known to losslessd");
            if let Reading::Value(n) = &self.f.nic {
                if n.state.dcbx.is_some_and(|m| m & DCBX_LLD_MANAGED != 0) {
                    e.push_str("; the NIC's firmware runs DCBX (dcbnl DCBX mode LLD_MANAGED)");
                }
            }
            return unknown(e, fix);
        };
        let port = self.port();
        let version = if d.ieee() {
            "IEEE 802.1Qaz"
        } else {
            "CEE DCBX"
        };
        if !d.link_up {
            return problem(
                "the link is down",
                format!("ip link set {port} up, and check the cable and the switch port"),
            );
        }
        if !d.dcbx.dcbx_enabled {
            return problem(
                "DCBX is off on the port (dcbx.enabled = false)",
                self.config(
                    "dcbx.enabled = true (or dcbx.mode = \"static\" facing a switch without DCBX)",
                ),
            );
        }
        if d.is_static() {
            // Nothing negotiated: the neighbour's PFC, when it sends a TLV, must match.
            let (ours, _) = d.oper_pfc();
            return match d.peer_pfc() {
                Some(peer) if peer != ours => problem(
                    format!(
                        "static mode (dcbx.mode = \"static\"), and the neighbour's DCBX TLVs say \
                         PFC on {}, this port runs PFC on {}",
                        priorities(peer),
                        priorities(ours)
                    ),
                    format!(
                        "configure the same PFC at both ends: lossless dcbx set {port} pfc \
                         --priorities {}, or the switch's",
                        ours.priorities()
                            .map(|p| p.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ),
                _ => ok(format!(
                    "static mode (dcbx.mode = \"static\"): nothing negotiated, the configuration \
                     runs as written; {} LLDP neighbour{}",
                    d.neighbors,
                    if d.neighbors == 1 { "" } else { "s" }
                )),
            };
        }
        if !d.dcbx.dcbx_active {
            return problem(
                format!(
                    "DCBX does not run on the port (LLDP admin status {})",
                    d.admin_status
                ),
                self.config("lldp admin status rxtx (the default)"),
            );
        }
        if !d.dcbx.peer_present {
            let silent = !d.neighbor_dcbx.is_empty() && d.neighbor_dcbx.iter().all(|k| k == "none");
            let why = if silent {
                "the LLDP neighbour sends no DCBX TLV".to_string()
            } else if d.ieee() {
                d.dcbx.ieee.pfc.reason_text.clone()
            } else {
                d.dcbx.pfc.reason_text.clone()
            };
            let fix = if silent {
                format!(
                    "facing a switch that sends LLDP without DCBX (SONiC): lossless dcbx set \
                     {port} mode static; or turn DCBX (IEEE 802.1Qaz) on for the switch port"
                )
            } else {
                format!(
                    "turn DCBX (IEEE 802.1Qaz) on for the switch port facing {port}; facing a \
                     switch that sends LLDP without DCBX (SONiC): lossless dcbx set {port} mode \
                     static"
                )
            };
            return problem(format!("no DCBX peer: {why}"), fix);
        }
        let mut bad: Vec<String> = if d.ieee() {
            let i = &d.dcbx.ieee;
            [i.ets.fault("ets"), i.pfc.fault("pfc"), i.app.fault("app")]
                .into_iter()
                .flatten()
                .collect()
        } else {
            let c = &d.dcbx;
            [c.pg.fault("pg"), c.pfc.fault("pfc"), c.app.fault("app")]
                .into_iter()
                .flatten()
                .collect()
        };
        if d.dcbx.any_error && bad.is_empty() {
            bad.push("a feature is in error".into());
        }
        if bad.is_empty() {
            let features = if d.ieee() {
                "ETS, PFC and APP agreed"
            } else {
                "PG, PFC and APP in sync"
            };
            ok(format!(
                "{version} with the peer (mode {}): {features}",
                d.dcbx.mode.configured
            ))
        } else {
            problem(
                format!("{version} with the peer: {}", bad.join("; ")),
                format!(
                    "make the two ends' configurations agree: `lossless dcbx show {port}` says \
                     each feature's admin, peer and oper values; take the switch's with \
                     lossless dcbx set {port} pfc --willing yes (likewise ets, app), or change \
                     the switch's"
                ),
            )
        }
    }

    pub(super) fn pfc(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let mut parts = Parts::default();
        match self.ours_pfc() {
            Some((m, whence)) if m.contains(p) => {
                parts.ok(format!("PFC on {} here, {whence}", priorities(m)))
            }
            Some((m, whence)) => {
                let fix = match self.d {
                    Some(_) if whence.contains("peer") => format!(
                        "the peer's PFC runs here (willing): turn PFC on for priority {p} on \
                         the switch port, or impose it: lossless dcbx set {port} pfc --willing \
                         no --priorities {p}"
                    ),
                    Some(_) => format!("lossless dcbx set {port} pfc --priorities {p}"),
                    None => format!("dcb pfc set dev {port} prio-pfc {p}:on"),
                };
                parts.problem(
                    format!(
                        "PFC on {} here, {whence}: not on RoCE's priority {p}",
                        priorities(m)
                    ),
                    fix,
                );
            }
            None => {
                let why = match (&self.f.nic, self.d) {
                    (Reading::Value(_), _) => "the driver reports no PFC (ieee_getpfc)".into(),
                    (r, _) => format!("the NIC's PFC {}", reading_why(r)),
                };
                parts.unknown(
                    format!("PFC here is not known: {why}"),
                    self.daemon_missing().1,
                );
            }
        }
        let peer = match self.d {
            Some(d) => d.peer_pfc().ok_or_else(|| {
                if d.is_static() {
                    "the neighbour sends no IEEE 802.1Qaz PFC TLV (static mode)".to_string()
                } else {
                    "the peer sends no PFC TLV".to_string()
                }
            }),
            None => match &self.f.nic {
                Reading::Value(n) if n.peer_pfc.is_some() => n.peer_pfc.ok_or_else(String::new),
                _ => Err(format!(
                    "{}: the peer's PFC TLV is known to losslessd",
                    self.daemon_missing().0
                )),
            },
        };
        match peer {
            Ok(m) if m.contains(p) => parts.ok(format!("the peer's PFC on {}", priorities(m))),
            Ok(m) => parts.problem(
                format!("the peer's PFC on {}: not on {p}", priorities(m)),
                format!("turn PFC on for priority {p} on the peer's port (the switch port facing {port})"),
            ),
            Err(why) => parts.unknown(
                format!("the peer's PFC is not known: {why}"),
                format!(
                    "check PFC on priority {p} in the switch's configuration for the port facing \
                     {port}"
                ),
            ),
        }
        parts.verdict()
    }

    pub(super) fn app(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let Some((apps, whence)) = self.oper_apps() else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}; the NIC's APP table {}", reading_why(&self.f.nic)),
                fix,
            );
        };
        let mut parts = Parts::default();
        let find = |sel: &[Selector], proto: u16| -> Vec<AppPriority> {
            apps.iter()
                .filter(|e| sel.contains(&e.selector) && e.protocol == proto)
                .copied()
                .collect()
        };
        let add_fix = |what: &str| match self.d {
            Some(_) => format!("lossless dcbx set {port} app add {what} {p}"),
            None => match what.split_once(' ') {
                Some(("dscp", d)) => format!("dcb app add dev {port} dscp-prio {d}:{p}"),
                _ => format!("dcb app add dev {port} dgram-port-prio {ROCE_UDP}:{p}"),
            },
        };
        // The entries of `what` that send it elsewhere than p, removed.
        let del_fix = |got: &[AppPriority], what: &str| -> String {
            got.iter()
                .filter(|e| e.priority != p)
                .map(|e| match self.d {
                    Some(_) => format!("lossless dcbx set {port} app del {what} {}", e.priority),
                    None => match what.split_once(' ') {
                        Some(("dscp", d)) => {
                            format!("dcb app del dev {port} dscp-prio {d}:{}", e.priority)
                        }
                        _ => format!(
                            "dcb app del dev {port} dgram-port-prio {ROCE_UDP}:{}",
                            e.priority
                        ),
                    },
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        // One classifier (a DSCP, udp 4791) with entries: ok when every one sends RoCE
        // to p; otherwise a problem whose fix deletes the entries elsewhere (and adds p's
        // where there is none). False: no entry at all, for the caller to judge.
        let judge = |parts: &mut Parts, got: &[AppPriority], what: &str, name: &str| -> bool {
            if got.is_empty() {
                return false;
            }
            if got.iter().all(|e| e.priority == p) {
                parts.ok(format!("{} {whence}", entries_text(got)));
            } else if got.iter().any(|e| e.priority == p) {
                // Two priorities for one classifier: the NIC keeps one of them (the
                // driver's choice), so RoCE may not land on p.
                parts.problem(
                    format!(
                        "{} {whence}: {name} goes to more than one priority, the NIC \
                         classifies it to one of them",
                        entries_text(got)
                    ),
                    del_fix(got, what),
                );
            } else {
                parts.problem(
                    format!("{} {whence}: not to {p}", entries_text(got)),
                    format!("{}; {}", del_fix(got, what), add_fix(what)),
                );
            }
            true
        };
        match c.dscp {
            Some(dscp) => {
                let what = format!("dscp {dscp}");
                let got = find(&[Selector::DSCP], u16::from(dscp));
                if !judge(&mut parts, &got, &what, &format!("DSCP {dscp}")) {
                    parts.problem(
                        format!("no APP entry for DSCP {dscp} {whence}"),
                        add_fix(&what),
                    );
                }
            }
            None => parts.problem(
                format!("no DSCP entry sends RoCE to priority {p}: a NIC trusting DSCP classifies RoCEv2 by its DSCP"),
                add_fix("dscp 26"),
            ),
        }
        let udp_what = format!("udp {ROCE_UDP}");
        let udp = find(&[Selector::UDP, Selector::PORT], ROCE_UDP);
        if !judge(&mut parts, &udp, &udp_what, &udp_what) {
            if self.d.is_some() {
                parts.problem(
                    format!("no APP entry for udp {ROCE_UDP} (RoCEv2) {whence}"),
                    add_fix(&udp_what),
                );
            } else {
                parts.ok(format!(
                    "no udp {ROCE_UDP} entry in the NIC (drivers that take DSCP entries only \
                     refuse it; RoCEv2 is classified by its DSCP)"
                ));
            }
        }
        // The peer classifying RoCE elsewhere: its TLV as losslessd or, without one, the
        // NIC's firmware agent saw it.
        let peer = match self.d {
            Some(d) => d.peer_app(),
            None => match &self.f.nic {
                Reading::Value(n) => n.peer_apps.clone(),
                _ => None,
            },
        };
        if let Some(peer) = peer {
            let other: Vec<AppPriority> = peer
                .iter()
                .filter(|e| e.priority != p)
                .filter(|e| {
                    (e.selector == Selector::DSCP
                        && c.dscp.is_some_and(|d| e.protocol == u16::from(d)))
                        || (matches!(e.selector, Selector::UDP | Selector::PORT)
                            && e.protocol == ROCE_UDP)
                })
                .copied()
                .collect();
            if !other.is_empty() {
                parts.problem(
                    format!("the peer sends {}", entries_text(&other)),
                    format!("map RoCE to priority {p} on the switch port facing {port} as well"),
                );
            }
        }
        parts.verdict()
    }

    pub(super) fn nic(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let fix = match self.d.map(|d| &d.hardware) {
            Some(Hardware::ReportOnly) => self.config(
                "apply = \"dcbnl\" (losslessd then programs the NIC with what it negotiates)",
            ),
            Some(_) => format!(
                "`lossless dcbx show {port}`: its nic row says what the driver holds and refused"
            ),
            None => {
                let mut s = format!("dcb pfc set dev {port} prio-pfc {p}:on");
                if let Some(d) = c.dscp {
                    s.push_str(&format!("; dcb app add dev {port} dscp-prio {d}:{p}"));
                }
                s
            }
        };
        let n = match &self.f.nic {
            Reading::Value(n) => n,
            Reading::NotExposed(why) => {
                return problem(
                    format!("the NIC has no DCB netlink ({why}): it runs no PFC the kernel set"),
                    "a NIC with DCB (dcbnl) is needed for lossless RoCE".to_string(),
                )
            }
            Reading::Failed(e) => {
                return unknown(
                    format!("the NIC could not be read back: {e}"),
                    "run as root (CAP_NET_ADMIN) in the port's network namespace".to_string(),
                )
            }
        };
        let mut parts = Parts::default();
        match n.state.pfc {
            Some(pfc) if PriorityMap(pfc.enabled).contains(p) => parts.ok(format!(
                "the NIC runs PFC on {}",
                priorities(PriorityMap(pfc.enabled))
            )),
            Some(pfc) => parts.problem(
                format!(
                    "the NIC runs PFC on {}, not on {p}",
                    priorities(PriorityMap(pfc.enabled))
                ),
                fix.clone(),
            ),
            None => parts.unknown(
                "the driver reports no PFC (ieee_getpfc)",
                "read it with the vendor's tool (mlnx_qos -i PORT)".replace("PORT", port),
            ),
        }
        if let Some(d) = self.d {
            let (oper, _) = d.oper_pfc();
            if let Some(pfc) = n.state.pfc {
                if PriorityMap(pfc.enabled) != oper {
                    parts.problem(
                        format!(
                            "losslessd runs PFC on {} in operation, the NIC on {}",
                            priorities(oper),
                            priorities(PriorityMap(pfc.enabled))
                        ),
                        fix.clone(),
                    );
                }
            }
        }
        if let Some(dscp) = c.dscp {
            let held: Vec<AppPriority> = n
                .state
                .apps
                .iter()
                .filter(|e| e.selector == Selector::DSCP && e.protocol == u16::from(dscp))
                .copied()
                .collect();
            if held.iter().any(|e| e.priority == p) {
                parts.ok(format!("it holds {}", entries_text(&held)));
            } else if held.is_empty() {
                parts.problem(format!("it holds no entry for DSCP {dscp}"), fix.clone());
            } else {
                parts.problem(format!("it holds {}, not to {p}", entries_text(&held)), fix);
            }
        }
        parts.verdict()
    }

    pub(super) fn trust(&self) -> Verdict {
        let port = self.port();
        let fix = format!("dcb apptrust set dev {port} order dscp pcp");
        let n = match &self.f.nic {
            Reading::Value(n) => n,
            r => {
                return unknown(
                    format!("the NIC's trust order {}", reading_why(r)),
                    self.nic_fix(),
                )
            }
        };
        let words = |t: &[u8]| {
            t.iter()
                .map(|s| match *s {
                    255 => "pcp".to_string(),
                    s => Selector(s)
                        .name()
                        .map_or_else(|| format!("selector {s}"), str::to_string),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(t) = &n.state.trust {
            return if t.first() == Some(&Selector::DSCP.0) {
                ok(format!(
                    "the NIC trusts DSCP first (trust order: {})",
                    words(t)
                ))
            } else if t.is_empty() {
                problem("the NIC's trust order is empty: it trusts no marking", fix)
            } else {
                problem(
                    format!(
                        "the NIC trusts {} first (trust order: {}): RoCE's DSCP is not what picks \
                         its priority",
                        words(&t[..1]),
                        words(t)
                    ),
                    fix,
                )
            };
        }
        let driver = self.f.host.driver.clone().unwrap_or_else(|| "?".into());
        let dscp_held: Vec<AppPriority> = n
            .state
            .apps
            .iter()
            .filter(|e| e.selector == Selector::DSCP)
            .copied()
            .collect();
        if DSCP_TRUSTING_DRIVERS.contains(&driver.as_str()) {
            if dscp_held.is_empty() {
                problem(
                    format!(
                        "{driver} reports no trust order, and trusts PCP until it holds a DSCP \
                         APP entry: it holds none"
                    ),
                    match c_dscp(&self.class) {
                        Some((d, p)) => format!("dcb app add dev {port} dscp-prio {d}:{p}"),
                        None => format!("dcb app add dev {port} dscp-prio 26:3"),
                    },
                )
            } else {
                ok(format!(
                    "{driver} reports no trust order (no dcbnl getapptrust); it trusts DSCP from \
                     its first DSCP APP entry on, and holds {}",
                    entries_text(&dscp_held)
                ))
            }
        } else {
            unknown(
                format!(
                    "the driver ({driver}) reports no trust order (dcbnl getapptrust, Linux 6.2 \
                     and later): whether it classifies by DSCP is not known"
                ),
                format!("{fix} (where the driver takes it), or the vendor's tool"),
            )
        }
    }
}

/// RoCE's DSCP and priority, when both are known.
fn c_dscp(c: &Option<RoceClass>) -> Option<(u8, u8)> {
    c.as_ref().and_then(|c| c.dscp.map(|d| (d, c.priority)))
}
