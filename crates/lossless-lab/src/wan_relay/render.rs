//! The wan-relay report for people: the path once, then per tunnel the four
//! steps, then a table across tunnels.

use std::fmt::Write;

use lossless_headroom::units::{grouped, Rate};

use super::{Cause, RelayRun};

fn us(ns: u64) -> String {
    let whole = ns / 1000;
    format!("{}.{:03}", grouped(whole), ns % 1000)
}

fn rate_text(bps: u64) -> String {
    if bps == 0 {
        "0".to_string()
    } else {
        format!("{}b/s", Rate(bps))
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The report for people: the path once, then per tunnel the four steps,
/// then a table across tunnels.
pub fn render(runs: &[RelayRun]) -> String {
    let mut s = String::new();
    let Some(first) = runs.first() else {
        return s;
    };
    let p = &first.path;
    let d = |i: usize| p.links.get(i).map_or(0, |l| l.delay_ns);
    let _ = writeln!(
        s,
        "\npath (draft-he-rtgwg-wan-pfc-00 figure 2), {} links, store and forward, nodes add no delay of their own:",
        rate_text(p.rate_bps)
    );
    let _ = writeln!(
        s,
        "  DC2-GW --{} us-- PE2 ==={} us=== P ==={} us=== PE1 --{} us-- DC1-GW",
        us(d(0)),
        us(d(1)),
        us(d(2)),
        us(d(3))
    );
    s.push_str(
        "  P routes on the outer header only (IPv6/IPv4 destination, top MPLS label), decrements\n  \
         the hop limit / TTL and rewrites the outer MACs; it never looks at the PFC frame.\n",
    );
    let st = &first.storm;
    let _ = writeln!(
        s,
        "  PE2 storm ceiling: refreshes held while DC1-GW is still paused, one sent before its pause\n  \
         lapses; resumes {} per second per priority, burst {}; episode gap {}",
        st.max_per_second
            .map_or("none".to_string(), |r| r.to_string()),
        st.burst
            .or(st.max_per_second)
            .map_or("-".to_string(), |b| b.to_string()),
        st.episode_gap
    );
    for r in runs {
        render_run(&mut s, r);
    }
    render_summary(&mut s, runs);
    s
}

fn render_run(s: &mut String, r: &RelayRun) {
    let _ = writeln!(s, "\n=== {}: {} ===", r.tunnel, r.tunnel_description);
    let pz = &r.pause;
    let times: Vec<String> = (0..8)
        .filter(|i| pz.sent.class_enable & (1 << i) != 0)
        .map(|i| format!("p{i} {}", pz.sent.quanta[i]))
        .collect();
    let _ = writeln!(
        s,
        "1. DC2-GW pauses priorities (vector {:#06x}, {} quanta), hop by hop (us since sent):",
        pz.sent.class_enable,
        times.join(", ")
    );
    for h in &pz.hops {
        let _ = writeln!(
            s,
            "   {:<14} {:>4} B  sent {:>9}, received {:>9}",
            h.link,
            h.len,
            us(h.sent_ns),
            us(h.arrived_ns)
        );
        match &h.outer {
            Some(outer) => {
                let _ = writeln!(s, "     outer  {outer}");
                let _ = writeln!(s, "     inner  {}", h.inner);
            }
            None => {
                let _ = writeln!(s, "     frame  {}", h.inner);
            }
        }
        let _ = writeln!(s, "     then   {}", h.outcome);
    }
    match (&pz.delivered, pz.end_to_end_ns) {
        (Some(d), Some(e2e)) => {
            let intact = d.class_enable == pz.sent.class_enable && d.quanta == pz.sent.quanta;
            let _ = writeln!(
                s,
                "   DC1-GW accepted it from {} (PE1's DC port; DC2-GW sent it from {}), vector and pause times {}",
                d.src,
                pz.sent.src,
                if intact { "as sent" } else { "CHANGED" }
            );
            let _ = writeln!(
                s,
                "   forwarding delay DC2-GW to DC1-GW: {} us = propagation {} us + serialization {} us on 4 links",
                us(e2e),
                us(pz.propagation_ns),
                us(pz.serialization_ns)
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "   DC1-GW did not accept it{}",
                pz.refused.map_or(String::new(), |r| format!(": {r}"))
            );
        }
    }

    let il = &r.illegal;
    let _ = writeln!(s, "2. illegal frames from DC2-GW, PE2's verdict:");
    for c in &il.cases {
        let _ = writeln!(
            s,
            "   {:<46} {:>3} B  {}",
            c.what,
            c.len,
            c.dropped
                .map_or("NOT DROPPED".to_string(), |d| format!("dropped: {d}"))
        );
    }
    let counted: Vec<String> = il
        .pe2_dropped
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect();
    let _ = writeln!(
        s,
        "   PE2 drop counters: {} (other reasons 0); sent to the WAN: {}, reached DC1-GW: {}",
        counted.join(", "),
        il.sent_to_wan,
        il.reached_dc1
    );

    let st = &r.storm;
    let _ = writeln!(
        s,
        "3. storm: DC2-GW pauses priority {} every {} us, {} times, then resumes ({} frames)",
        st.priority,
        us(st.interval_ns),
        st.pauses,
        st.offered
    );
    let _ = writeln!(
        s,
        "   PE2: {} relayed at once, {} suppressed, {} sent later (refreshes before the far pause \
         lapses, held resumes); {} priority instances held back",
        st.pe2.relayed, st.pe2.suppressed, st.pe2.flushed, st.suppressed_instances
    );
    let arrivals: Vec<String> = st
        .arrivals
        .iter()
        .map(|a| {
            format!(
                "{}{}{}",
                ms(a.at_ns),
                match a.quanta {
                    0 => " resume".to_string(),
                    0xffff => String::new(),
                    q => format!(" ({q})"),
                },
                if a.cause == Cause::Flushed { "*" } else { "" }
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "   DC1-GW received {} (ms since the first pause left DC2-GW; (quanta) when not 65535; \
         * = sent later):",
        st.arrivals.len()
    );
    let shown: Vec<&[String]> = if arrivals.len() > 16 {
        vec![&arrivals[..8], &arrivals[arrivals.len() - 4..]]
    } else {
        vec![&arrivals[..]]
    };
    for (i, part) in shown.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(s, "     ... {} more ...", arrivals.len() - 12);
        }
        for chunk in part.chunks(4) {
            let _ = writeln!(s, "     {}", chunk.join("  "));
        }
    }
    let _ = writeln!(
        s,
        "   DC1-GW paused {} of the {} ms from the first pause to the resume: {}",
        ms(st.far_paused_ns),
        ms(st.arrivals.last().map_or(0, |l| l.at_ns) - st.arrivals.first().map_or(0, |f| f.at_ns)),
        if st.far_gaps.is_empty() {
            "no gap".to_string()
        } else {
            format!(
                "{} GAPS, the first {:?} ns",
                st.far_gaps.len(),
                st.far_gaps[0]
            )
        }
    );
    let first = st.arrivals.first();
    let last = st.arrivals.last();
    let _ = writeln!(
        s,
        "   first pause relayed: {}; final resume relayed: {} (sent by DC2-GW at {} ms{})",
        if first.is_some_and(|a| a.quanta != 0) {
            "yes"
        } else {
            "NO"
        },
        if last.is_some_and(|a| a.quanta == 0) {
            "yes"
        } else {
            "NO"
        },
        ms(st.resume_sent_ns),
        last.filter(|a| a.quanta == 0)
            .map_or(String::new(), |a| format!(", at DC1-GW {} ms", ms(a.at_ns)))
    );

    match &r.gateway_buffer {
        Some(b) => {
            let _ = writeln!(
                s,
                "4. gateway buffer (draft-he-rtgwg-wan-pfc-00 s3.2) at DC2-GW's receiving port, per lossless priority:\n   \
                 (receive {} - send {}) x forwarding delay {} us = {} bits,\n   \
                 so reserve more than that: at least {} bytes (a lower bound: the link's own\n   \
                 delay value, PFC Delay Value Constraint Model, comes on top)",
                rate_text(b.rx_rate_bps),
                rate_text(b.tx_rate_bps),
                us(b.forwarding_delay_ns),
                grouped(b.condition.product_bits),
                grouped(b.condition.minimum_bytes)
            );
        }
        None => {
            let _ = writeln!(s, "4. gateway buffer: no forwarding delay was measured");
        }
    }
}

fn render_summary(s: &mut String, runs: &[RelayRun]) {
    let _ = writeln!(s, "\nsummary:");
    let header = [
        "tunnel",
        "WAN frame",
        "DC2-GW to DC1-GW",
        "accepted",
        "dropped at PE2",
        "storm: crossed/offered",
        "held back",
        "buffer at DC2-GW",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for r in runs {
        let wan = r.pause.hops.get(1).map_or(0, |h| h.len);
        rows.push(vec![
            r.tunnel.to_string(),
            format!("{wan} B"),
            r.pause
                .end_to_end_ns
                .map_or("-".to_string(), |e| format!("{} us", us(e))),
            if r.pause.delivered.is_some() {
                "yes"
            } else {
                "NO"
            }
            .to_string(),
            format!(
                "{}/{}",
                r.illegal
                    .cases
                    .iter()
                    .filter(|c| c.dropped.is_some())
                    .count(),
                r.illegal.cases.len()
            ),
            format!("{}/{}", r.storm.arrivals.len(), r.storm.offered),
            r.storm.suppressed_instances.to_string(),
            r.gateway_buffer.as_ref().map_or("-".to_string(), |b| {
                format!("{} B", grouped(b.condition.minimum_bytes))
            }),
        ]);
    }
    let mut widths = vec![0usize; header.len()];
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    for row in &rows {
        let mut line = String::from(" ");
        for (c, w) in row.iter().zip(&widths) {
            let _ = write!(line, " {c:<w$}");
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}
