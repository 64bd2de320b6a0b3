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

/// An ETS class without its share is refused where the share should be (it was read
/// as 0 %: the summary never writes one without it).
#[test]
fn an_ets_class_without_its_share_is_refused() {
    let text = "tc0 {0,1,2,4,5,6,7} ets; tc1 {3} ets 100%";
    let Err(e) = EtsTable::parse(text) else {
        panic!("{text} taken")
    };
    assert_eq!(e.offset, "tc0 {0,1,2,4,5,6,7} ets".len(), "{e}");
    assert!(e.to_string().contains("share"), "{e}");
    assert!(EtsTable::parse("tc0 {0,1,2,4,5,6,7} ets 0%; tc1 {3} ets 100%").is_ok());
}
