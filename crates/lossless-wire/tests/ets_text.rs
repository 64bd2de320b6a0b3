//! The one ETS notation (`tc0 {0,1,2} ets 50%; tc2 {6} strict`) read back: for every
//! valid table, parse(summary(t)) is the table the summary shows, which is t itself
//! whenever no strict class without a priority holds a share (the summary leaves such
//! a class out); any text the parser accepts is written back to the same table; no
//! input panics.

mod ieee_support;

use ieee_support::ets_table;
use lossless_wire::ieee::{EtsTable, Tsa};
use proptest::prelude::*;

/// `t` as the summary shows it: a strict class that serves no priority is not written,
/// so its share reads back as 0.
fn shown(t: &EtsTable) -> EtsTable {
    let mut s = *t;
    for tc in 0..8u8 {
        let serves = t.prio_tc.contains(&tc);
        if !serves && t.tsa[usize::from(tc)] == Tsa::STRICT {
            s.tc_bw[usize::from(tc)] = 0;
        }
    }
    s
}

/// `t` with the shares the summary would leave out given to priority 0's class (which
/// the summary always writes): still valid, and every share shown.
fn all_shown(t: &EtsTable) -> EtsTable {
    let mut s = *t;
    let keep = usize::from(t.prio_tc[0]);
    for tc in 0..8u8 {
        let i = usize::from(tc);
        if !t.prio_tc.contains(&tc) && t.tsa[i] == Tsa::STRICT && i != keep {
            s.tc_bw[keep] += s.tc_bw[i];
            s.tc_bw[i] = 0;
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_valid_table_reads_back(t in ets_table()) {
        prop_assert_eq!(t.validate(), Ok(()));
        let text = t.summary();
        let back = EtsTable::parse(&text)
            .unwrap_or_else(|e| panic!("{text:?} refused: {e}"));
        prop_assert_eq!(back, shown(&t), "{}", text);
        let whole = all_shown(&t);
        prop_assert_eq!(whole.validate(), Ok(()));
        let text = whole.summary();
        prop_assert_eq!(EtsTable::parse(&text), Ok(whole), "{}", text);
        prop_assert_eq!(text.parse::<EtsTable>(), Ok(whole));
    }

    #[test]
    fn what_is_accepted_is_written_back_the_same(text in "[tc0-9{},; %a-z]{0,60}") {
        if let Ok(t) = EtsTable::parse(&text) {
            prop_assert_eq!(EtsTable::parse(&t.summary()), Ok(t), "{}", text);
        }
    }

    #[test]
    fn near_misses_of_a_summary_never_panic(
        t in ets_table(),
        cut in 0usize..80,
        insert in "[tc0-9{},; %]{0,3}",
    ) {
        let text = t.summary();
        let cut = cut.min(text.len());
        let mangled = format!("{}{insert}{}", &text[..cut], &text[cut..]);
        match EtsTable::parse(&mangled) {
            Ok(u) => prop_assert_eq!(EtsTable::parse(&u.summary()), Ok(u)),
            Err(e) => prop_assert!(e.offset <= mangled.len(), "{}: {}", mangled, e),
        }
    }
}
