//! The checks of the link: the MTU against the peer and the headroom, the headroom
//! against the buffer, the PFC storm watchdog, drops on PFC priorities.

use super::*;

impl Ctx<'_> {
    pub(super) fn mtu(&self) -> Verdict {
        let port = self.port();
        let mtu = match &self.f.mtu {
            Reading::Value(m) => *m,
            r => {
                return unknown(
                    format!("the MTU {}", reading_why(r)),
                    format!("ip link show {port}"),
                )
            }
        };
        let frame = mtu + FRAME_OVERHEAD;
        let tagged = frame + VLAN_TAG;
        let mut parts = Parts::default();
        parts.ok(format!(
            "MTU {mtu}: frames up to {frame} octets ({tagged} with a VLAN tag)"
        ));
        match self.d.and_then(|d| d.headroom.as_ref()) {
            Some(h) if !h.off => match h.max_frame_octets {
                Some(m) if m < u64::from(tagged) => parts.problem(
                    format!("the headroom is sized for {m}-octet frames"),
                    self.config(&format!("headroom.max_frame = {tagged}")),
                ),
                Some(m) => parts.ok(format!("the headroom is sized for {m}-octet frames")),
                None => {}
            },
            _ => {}
        }
        // A peer that counts the tag (or not) is within one tag of this end.
        match self.d {
            Some(d) => match d.peer_max_frame.map(u32::from) {
                Some(pm) if pm + VLAN_TAG < frame => parts.problem(
                    format!(
                        "the peer takes frames up to {pm} octets (its LLDP Maximum Frame Size): \
                         larger ones from here are dropped"
                    ),
                    format!(
                        "ip link set {port} mtu {} (or raise the switch port's MTU)",
                        pm.saturating_sub(FRAME_OVERHEAD)
                    ),
                ),
                Some(pm) if pm > tagged => parts.problem(
                    format!(
                        "the peer sends frames up to {pm} octets (its LLDP Maximum Frame Size): \
                         larger than MTU {mtu} takes"
                    ),
                    format!(
                        "ip link set {port} mtu {} (or lower the switch port's MTU)",
                        pm.saturating_sub(FRAME_OVERHEAD)
                    ),
                ),
                Some(pm) => parts.ok(format!("the peer takes frames up to {pm} octets")),
                None => parts.unknown(
                    "the peer's maximum frame size is not known: its LLDPDUs carry no IEEE \
                     802.3 Maximum Frame Size TLV",
                    format!("compare with the MTU of the switch port facing {port}"),
                ),
            },
            None => {
                let (why, fix) = self.daemon_missing();
                parts.unknown(
                    format!("{why}: the peer's maximum frame size (LLDP) is known to losslessd"),
                    fix,
                )
            }
        }
        parts.verdict()
    }

    pub(super) fn headroom(&self) -> Verdict {
        let port = self.port();
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}: the link's headroom need is measured by losslessd"),
                fix,
            );
        };
        let Some(h) = &d.headroom else {
            return unknown(
                "losslessd gave no headroom answer for the port",
                format!("lossless headroom show {port}"),
            );
        };
        let measure = self
            .config("headroom.measure = true (the peer must answer the measurement: losslessd)");
        if h.off {
            return unknown(
                format!(
                    "the link's need is not measured: {}",
                    h.reason.as_deref().unwrap_or("measurement off")
                ),
                measure,
            );
        }
        let Some(need) = &h.need else {
            let why = match (&h.socket_error, h.running) {
                (Some(e), _) => format!("the measurement socket failed: {e}"),
                (None, false) => "the peer does not advertise the measurement".to_string(),
                (None, true) => format!("no measurement yet ({} failed)", h.failures),
            };
            return unknown(
                format!("the link's need is not known: {why}"),
                format!("lossless headroom show {port}"),
            );
        };
        let need_bytes = need.headroom.bytes;
        let mut parts = Parts::default();
        parts.ok(format!("the link needs {need_bytes} bytes of headroom"));
        if let Some(a) = h.applied {
            if a.bytes < need_bytes {
                parts.problem(
                    format!("the port holds {} bytes", a.bytes),
                    format!("lossless headroom show {port}"),
                );
            }
        }
        match h.buffer.as_ref().map(|b| b.state.as_str()) {
            Some("sized") => {
                let held = h
                    .buffer
                    .as_ref()
                    .and_then(|b| b.headroom_bytes)
                    .unwrap_or(0);
                if held >= need_bytes {
                    parts.ok(format!(
                        "every NIC buffer holding a PFC priority holds at least {held} bytes"
                    ));
                } else {
                    parts.problem(
                        format!("the NIC's lossless buffers hold {held} bytes"),
                        format!("lossless headroom show {port}"),
                    );
                }
                return parts.verdict();
            }
            Some("does_not_fit") => {
                let why = h
                    .buffer
                    .as_ref()
                    .and_then(|b| b.reason.clone())
                    .unwrap_or_default();
                parts.problem(
                    format!("it does not fit the port's buffer: {why}"),
                    "a shorter link, fewer PFC priorities, or a NIC with more buffer".to_string(),
                );
                return parts.verdict();
            }
            _ => {}
        }
        // The daemon does not size the buffer: what the NIC holds.
        let pfc = self.ours_pfc().map_or(0, |(m, _)| m.0);
        match (&self.f.nic, pfc) {
            (Reading::Value(n), pfc) if pfc != 0 => match n.state.buffer {
                Some(b) => {
                    let mask = b.buffers_of(pfc);
                    let smallest = (0..8)
                        .filter(|i| mask & (1 << i) != 0)
                        .filter_map(|i| b.buffer_size.get(i).copied())
                        .min();
                    match smallest {
                        Some(s) if u64::from(s) >= need_bytes => parts.ok(format!(
                            "the NIC's buffers holding PFC priorities are {s} bytes or more"
                        )),
                        Some(s) => parts.problem(
                            format!("the NIC's smallest buffer holding a PFC priority is {s} bytes"),
                            self.config("headroom.buffer = true and apply = \"dcbnl\" (losslessd sizes the buffers)"),
                        ),
                        None => parts.unknown(
                            "no NIC buffer holds a PFC priority",
                            format!("lossless headroom show {port}"),
                        ),
                    }
                }
                None => parts.unknown(
                    format!(
                        "the NIC reports no DCB buffer (dcbnl getbuffer) and losslessd does not \
                         size it ({}): whether it holds {need_bytes} bytes is not known",
                        h.buffer
                            .as_ref()
                            .and_then(|b| b.reason.clone().or(b.error.clone()))
                            .unwrap_or_else(|| "buffer state not given".into())
                    ),
                    "the vendor's tool (mlnx_qos -i PORT --buffer_size)".replace("PORT", port),
                ),
            },
            (Reading::Value(_), _) => {
                parts.unknown("no PFC priority: no lossless buffer to size", "see pfc")
            }
            (r, _) => parts.unknown(
                format!("the NIC's buffers {}", reading_why(r)),
                self.nic_fix(),
            ),
        }
        parts.verdict()
    }

    pub(super) fn watchdog(&self) -> Verdict {
        let port = self.port();
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}: the PFC storm watchdog runs in losslessd"),
                fix,
            );
        };
        let Some(v) = &d.pfc else {
            return unknown(
                "losslessd gave no pfc show answer for the port",
                format!("lossless pfc show {port}"),
            );
        };
        let on = format!(
            "[ports.\"{port}\".pfc_watchdog] enabled = true in losslessd's configuration, then \
             `lossless reload`"
        );
        if !v.watchdog.enabled {
            return problem("the PFC storm watchdog is off: a storm would go unseen", on);
        }
        if !v.available {
            let why = v.reason.clone().unwrap_or_default();
            if why == "not read yet" {
                return unknown(
                    "the watchdog is on and has not read the counters yet",
                    format!("lossless pfc show {port}"),
                );
            }
            return problem(
                format!("the watchdog is on and sees no counters ({why}): a storm would go unseen"),
                "a driver that reports PFC counters (dcbnl ieee_getpfc, or ethtool statistics)",
            );
        }
        if v.source.as_deref() == Some("host") {
            let why = v.reason.clone().unwrap_or_default();
            return problem(
                format!(
                    "the driver has no PFC counters ({why}): the watchdog counts the PFC frames \
                     the host receives, so it sees pauses from the peer but not those this NIC \
                     sends (a storm from this host would go unseen)"
                ),
                "a driver that reports PFC counters (dcbnl ieee_getpfc, or ethtool statistics)",
            );
        }
        let watched = PriorityMap::from_priorities(&v.watchdog.priorities).unwrap_or_default();
        let Some(c) = &self.class else {
            // What it watches may not be RoCE's priority: not to be called ok.
            return unknown(
                format!(
                    "the PFC storm watchdog is on, watching {}; {}, so whether it watches \
                     RoCE's cannot be said",
                    priorities(watched),
                    self.no_class
                ),
                "see roce_class",
            );
        };
        if !watched.contains(c.priority) {
            return problem(
                format!(
                    "the watchdog watches {}, not RoCE's priority {}",
                    priorities(watched),
                    c.priority
                ),
                format!(
                    "pfc_watchdog.priorities = [{}] in [ports.\"{port}\"] (or leave it out: \
                     the port's PFC priorities), then `lossless reload`",
                    c.priority
                ),
            );
        }
        ok(format!(
            "the PFC storm watchdog is on ({}), watching {}, counters from {} every {} ms ({} \
             readings)",
            v.watchdog.action.name(),
            priorities(watched),
            v.source.as_deref().unwrap_or("?"),
            v.interval_ms,
            v.samples
        ))
    }

    pub(super) fn discards(&self) -> Verdict {
        let port = self.port();
        let pfc = match (self.ours_pfc(), &self.class) {
            (Some((m, _)), _) if m != PriorityMap::NONE => m,
            (_, Some(c)) => PriorityMap(1 << c.priority),
            _ => return unknown("no PFC priority known to look at", "see pfc and roce_class"),
        };
        let fix = format!(
            "the headroom is too small for the link (lossless headroom show {port}; \
             headroom.measure = true) or the peer does not honour PFC (lossless pfc show \
             {port}: is the peer paused?)"
        );
        // The driver's counters since it loaded, by name.
        let lifetime: Option<Vec<(String, u64)>> = match &self.f.stats {
            Reading::Value(s) => Some(
                s.iter()
                    .filter(|(n, _)| discard_priority(n).is_some_and(|p| pfc.contains(p)))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let text = |v: &[(String, u64)]| {
            v.iter()
                .map(|(n, x)| format!("{n} = {x}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // With the daemon: what it saw since it watches the port, and now.
        if let Some(v) = self.d.and_then(|d| d.pfc.as_ref()).filter(|v| v.available) {
            let watched: Vec<&crate::pfc::view::PriorityView> = v
                .priorities
                .iter()
                .filter(|q| pfc.contains(q.priority) && !q.discards.is_empty())
                .collect();
            if !watched.is_empty() {
                let total: u64 = watched.iter().filter_map(|q| q.discards_total()).sum();
                let rate: f64 = watched.iter().filter_map(|q| q.discard_rate()).sum();
                let kinds: Vec<String> = watched
                    .iter()
                    .flat_map(|q| {
                        q.discards
                            .iter()
                            .map(move |d| format!("priority {} {} {}", q.priority, d.kind, d.total))
                    })
                    .collect();
                let since = format!(
                    "since losslessd watches the port ({} readings every {} ms)",
                    v.samples, v.interval_ms
                );
                if total > 0 {
                    return problem(
                        format!(
                            "frames discarded on PFC priority {} {since}: {}; {rate:.0}/s now: \
                             the lossless guarantee was broken",
                            priorities(pfc),
                            kinds.join(", ")
                        ),
                        fix,
                    );
                }
                let before = lifetime
                    .as_deref()
                    .map(|l| {
                        l.iter()
                            .filter(|(_, x)| *x > 0)
                            .cloned()
                            .collect::<Vec<_>>()
                    })
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        format!(
                            " (the driver's counters since it loaded hold earlier ones: {})",
                            text(&l)
                        )
                    })
                    .unwrap_or_default();
                return ok(format!(
                    "no discards on PFC priority {} {since}{before}",
                    priorities(pfc)
                ));
            }
        }
        let counted = match lifetime {
            Some(c) => c,
            None => {
                return unknown(
                    format!("the driver's statistics {}", reading_why(&self.f.stats)),
                    format!("ethtool -S {port}"),
                )
            }
        };
        if counted.is_empty() {
            return unknown(
                format!(
                    "the driver ({}) reports no per-priority discard statistic for PFC priority \
                     {} (looked for {DISCARD_STATS_HELP})",
                    self.f.host.driver.as_deref().unwrap_or("?"),
                    priorities(pfc)
                ),
                format!("ethtool -S {port}"),
            );
        }
        let nonzero: Vec<(String, u64)> = counted.iter().filter(|(_, v)| *v > 0).cloned().collect();
        if nonzero.is_empty() {
            ok(format!(
                "no discards on PFC priority {}: {}",
                priorities(pfc),
                text(&counted)
            ))
        } else {
            problem(
                format!(
                    "frames were discarded on PFC priority {} since the driver's counters \
                     started: {}: the lossless guarantee was broken",
                    priorities(pfc),
                    text(&nonzero)
                ),
                fix,
            )
        }
    }
}
