#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The OFA QoS RFC's XML form: the RFC's own example (every mistake reported with
//! line:column and what was expected), a corrected version that parses and checks, the same
//! policy in both forms giving the same AST, and one snapshot line per kind of mistake.

use lossless_policy::check::{check, Severity};
use lossless_policy::Policy;

const SEED_EXAMPLE: &str = include_str!("data/qos-rfc-example.xml");
const SEED_CORRECTED: &str = include_str!("data/qos-rfc-corrected.xml");

fn errors(file: &str, src: &str) -> Vec<String> {
    match lossless_policy::parse_policy_all(file, src) {
        Ok(_) => vec![],
        Err(v) => v.iter().map(ToString::to_string).collect(),
    }
}

/// The policy as JSON with every line:column removed: what must be equal across forms.
fn without_places(p: &Policy) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                if m.len() == 2 && m.contains_key("line") && m.contains_key("col") {
                    *v = serde_json::Value::Null;
                    return;
                }
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(p).unwrap();
    strip(&mut v);
    v
}

#[test]
fn rfc_example_mistakes() {
    // The fixture is the specification's example verbatim (its 78 lines, 120-197 of the
    // rendered text); the test reads nothing outside the repository, so only its length
    // guards against an edit that would change what the example is.
    assert_eq!(SEED_EXAMPLE.lines().count(), 78, "the fixture was edited");

    let e = errors("qos-rfc-example.xml", SEED_EXAMPLE);
    // The three mistakes the issue names, each at its place with what was expected.
    let has = |needle: &str| e.iter().any(|l| l.contains(needle));
    assert!(
        has("qos-rfc-example.xml:39:3: found `<sl2vl-tables>` while `<sl2vl-tables>` opened at 28:3 is still open, expected `</sl2vl-tables>`"),
        "{e:#?}"
    );
    assert!(
        has("qos-rfc-example.xml:63:48: unexpected `</mtl_limit>`, expected `</mtu_limit>` to close `<mtu_limit>` opened at 63:36"),
        "{e:#?}"
    );
    let comments: Vec<&String> = e
        .iter()
        .filter(|l| l.contains("expected `<!--` to open a comment"))
        .collect();
    assert_eq!(comments.len(), 9, "{e:#?}");
    assert!(comments[0].starts_with("qos-rfc-example.xml:10:3: unexpected `<!—-`"));
    // And what the example gets wrong against OpenSM's grammar.
    assert!(has(
        "32:19: `15 values` is out of range, expected exactly 16 VLs"
    ));
    assert!(has(
        "55:9: `16` is out of range, expected an SL from 0 to 15"
    ));
    assert!(has("64:17: `1` is out of range, expected a rate enum"));
    assert!(has("59:16: unexpected `<tclass>`"));
    insta::assert_snapshot!(e.join("\n"));
}

#[test]
fn rfc_example_corrected_parses_and_checks() {
    let p = lossless_policy::parse_policy("qos-rfc-corrected.xml", SEED_CORRECTED).unwrap();
    assert_eq!(p.port_groups.len(), 4);
    assert_eq!(p.port_groups[1].name.value, "Virtual Servers");
    assert_eq!(p.port_groups[1].port_names[2].value.node_desc, "vs3/HCA-2");
    assert!(p.port_groups[3].node_types.router);
    assert_eq!(p.sl2vl_scopes.len(), 2);
    assert_eq!(p.sl2vl_scopes[1].table[15], 1);
    assert_eq!(p.vlarb_scopes[0].low.as_ref().unwrap().len(), 7);
    let names: Vec<&str> = p.levels.iter().map(|l| l.name.value.as_str()).collect();
    assert_eq!(names, ["DEFAULT", "1", "2", "3"]);
    assert_eq!(p.levels[3].mtu_limit.as_ref().unwrap().value, 1);
    assert_eq!(p.levels[3].rate_limit.as_ref().unwrap().value, 3);
    assert_eq!(p.rules.len(), 3);
    assert_eq!(p.rules[1].service_id.len(), 2);
    assert_eq!(p.rules[1].level.value, "3");
    let diags = check("qos-rfc-corrected.xml", &p, None);
    assert!(
        diags.iter().all(|d| d.severity == Severity::Warning),
        "{diags:#?}"
    );
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn both_forms_same_policy() {
    let conf = include_str!("data/qos-policy.conf");
    let xml = include_str!("data/qos-policy.xml");
    let a = lossless_policy::parse_policy("qos-policy.conf", conf).unwrap();
    let b = lossless_policy::parse_policy("qos-policy.xml", xml).unwrap();
    assert!(!a.rules.is_empty() && !a.ulps.is_empty());
    assert_eq!(without_places(&a), without_places(&b));

    // Every section and keyword, including the setup, in both forms.
    let conf = "\
port-groups
 port-group
  name: \"Left Side\"
  port-guid: 0x10-0x20, 0x40
  port-name: Hca1/P1, enp65s0f0
  pkey: 0x1234
  partition: Part1
  node-type: CA, SELF
 end-port-group
end-port-groups
qos-setup
 sl2vl-tables
  sl2vl-scope
   group: \"Left Side\"
   across-to: \"Left Side\"
   from: 1-4
   to: *
   sl2vl-table: 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7
  end-sl2vl-scope
 end-sl2vl-tables
 vlarb-tables
  vlarb-scope
   across: \"Left Side\"
   vlarb-high: 0:255,1:64
   vlarb-low: 2:32
   vl-high-limit: 5
  end-vlarb-scope
 end-vlarb-tables
end-qos-setup
qos-levels
 qos-level
  name: DEFAULT
  use: the rest
  sl: 0
  mtu-limit: 4
  rate-limit: 7
  packet-life: 12
  path-bits: 0-1
  pkey: 0x1234
  lossless: yes
 end-qos-level
end-qos-levels
qos-match-rules
 qos-match-rule
  use: all of it
  qos-class: 1-3
  source: \"Left Side\"
  destination: \"Left Side\"
  service-id: 0x10000-0x1ffff
  pkey: 0x8001
  qos-level-name: DEFAULT
 end-qos-match-rule
end-qos-match-rules
qos-ulps
 default: 1
 sdp, port-num 5000-6000 : 4
 srp, target-port-guid 0x100007 : 1
 any, source-target-port-guid 0x10-0x20 : 7
end-qos-ulps
";
    let xml = "\
<qos-policy>
 <port-groups>
  <port-group>
   <name>Left Side</name>
   <port-guid>0x10-0x20, 0x40</port-guid>
   <port-name>Hca1/P1, enp65s0f0</port-name>
   <pkey>0x1234</pkey>
   <partition>Part1</partition>
   <node-type>CA, SELF</node-type>
  </port-group>
 </port-groups>
 <qos-setup>
  <sl2vl-tables>
   <sl2vl-scope>
    <group>Left Side</group> <across-to>Left Side</across-to>
    <from>1-4</from> <to>*</to>
    <sl2vl-table>0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7</sl2vl-table>
   </sl2vl-scope>
  </sl2vl-tables>
  <vlarb-tables>
   <vlarb-scope>
    <across>Left Side</across>
    <vlarb-high>0:255,1:64</vlarb-high> <vlarb-low>2:32</vlarb-low>
    <vl-high-limit>5</vl-high-limit>
   </vlarb-scope>
  </vlarb-tables>
 </qos-setup>
 <qos-levels>
  <qos-level>
   <name>DEFAULT</name> <use>the rest</use> <sl>0</sl> <mtu-limit>4</mtu-limit>
   <rate-limit>7</rate-limit> <packet-life>12</packet-life> <path-bits>0-1</path-bits>
   <pkey>0x1234</pkey> <lossless/>
  </qos-level>
 </qos-levels>
 <qos-match-rules>
  <qos-match-rule>
   <use>all of it</use> <qos-class>1-3</qos-class> <source>Left Side</source>
   <destination>Left Side</destination> <service-id>0x10000-0x1ffff</service-id>
   <pkey>0x8001</pkey> <qos-level-name>DEFAULT</qos-level-name>
  </qos-match-rule>
 </qos-match-rules>
 <qos-ulps>
  <ulp>default: 1</ulp>
  <ulp>sdp, port-num 5000-6000 : 4</ulp>
  <ulp>srp, target-port-guid 0x100007 : 1</ulp>
  <ulp>any, source-target-port-guid 0x10-0x20 : 7</ulp>
 </qos-ulps>
</qos-policy>
";
    let a = lossless_policy::parse_policy("a.conf", conf).unwrap();
    let b = lossless_policy::parse_policy("b.xml", xml).unwrap();
    assert_eq!(a.port_groups[0].interfaces[0].value, "enp65s0f0");
    assert!(a.levels[0].lossless);
    // The OpenSM form records its extension keyword (OpenSM rejects it); the XML form is
    // ours anyway.
    assert_eq!(a.extensions.len(), 1);
    assert!(b.extensions.is_empty());
    let mut a = without_places(&a);
    a["extensions"] = serde_json::json!([]);
    assert_eq!(a, without_places(&b));
}

#[test]
fn form_detection() {
    let xml = "# a comment first\n\n  <!-- and an XML one -->\n<qos-policy>\n <qos-ulps><ulp>default : 3</ulp></qos-ulps>\n</qos-policy>\n";
    let p = lossless_policy::parse_policy("p", xml).unwrap();
    assert_eq!(p.ulp_default.unwrap().value, 3);
    // OpenSM's form is not mistaken for XML.
    let conf = "# <qos-policy> in a comment\nqos-ulps\n default : 2\nend-qos-ulps\n";
    let p = lossless_policy::parse_policy("p", conf).unwrap();
    assert_eq!(p.ulp_default.unwrap().value, 2);
}

#[test]
fn mistakes() {
    let cases: &[(&str, &str)] = &[
        ("unterminated comment", "<qos-policy>\n <!-- never closed\n</qos-policy>\n"),
        ("double hyphen in comment", "<qos-policy> <!-- a -- b --> </qos-policy>"),
        ("attribute", "<qos-policy version=\"1\">\n</qos-policy>"),
        ("missing end of root", "<qos-policy>\n <qos-levels>\n </qos-levels>\n"),
        ("text outside", "<qos-policy></qos-policy>\ntrailing words"),
        ("wrong root", "<policy></policy>"),
        ("second root", "<qos-policy></qos-policy><qos-policy></qos-policy>"),
        ("unknown section", "<qos-policy>\n <qos-rules></qos-rules>\n</qos-policy>"),
        ("duplicate name", "<qos-policy><qos-levels><qos-level><name>a</name><sn>2</sn><sl>1</sl></qos-level></qos-levels></qos-policy>"),
        ("missing sl", "<qos-policy><qos-levels>\n<qos-level><name>a</name></qos-level>\n</qos-levels></qos-policy>"),
        ("bare ampersand", "<qos-policy><port-groups><port-group><name>R&D</name><node-type>CA</node-type></port-group></port-groups></qos-policy>"),
        ("less-than in text", "<qos-policy><port-groups><port-group><name>a < b</name></port-group></port-groups></qos-policy>"),
        ("empty value", "<qos-policy><qos-levels><qos-level><name>a</name><sl></sl></qos-level></qos-levels></qos-policy>"),
        ("element in value", "<qos-policy><qos-levels><qos-level><name>a</name><sl><b>1</b></sl></qos-level></qos-levels></qos-policy>"),
        ("text in container", "<qos-policy><qos-levels>oops<qos-level><name>a</name><sl>1</sl></qos-level></qos-levels></qos-policy>"),
        ("rule order", "<qos-policy><qos-match-rules>\n<qos-match-rule><sn>2</sn><match-level>a</match-level></qos-match-rule>\n<qos-match-rule><sn>1</sn><match-level>a</match-level></qos-match-rule>\n</qos-match-rules></qos-policy>"),
        ("bad ulp", "<qos-policy><qos-ulps>\n  <ulp>sdp, port 10 : 1</ulp>\n</qos-ulps></qos-policy>"),
        ("multi-line value", "<qos-policy><port-groups><port-group><name>a</name>\n <port-guid>0x10,\n    0x2z</port-guid></port-group></port-groups></qos-policy>"),
        ("end tag of nothing", "<qos-policy></port-groups></qos-policy>"),
        ("missing end tag before sibling", "<qos-policy><port-groups>\n<port-group><name>a</name><node-type>CA</node-type>\n<port-group><name>b</name><node-type>SWITCH</node-type></port-group>\n</port-groups></qos-policy>"),
        ("unclosed value", "<qos-policy><qos-levels><qos-level><name>a</name><sl>1</qos-level></qos-levels></qos-policy>"),
        ("lossless value", "<qos-policy><qos-levels><qos-level><name>a</name><sl>1</sl><lossless>maybe</lossless></qos-level></qos-levels></qos-policy>"),
        ("entities decoded", "<qos-policy><port-groups><port-group><name>R&amp;D &#x41;</name><node-type>CA</node-type></port-group></port-groups><qos-ulps><ulp>default : 1</ulp></qos-ulps></qos-policy>"),
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|(n, s)| {
            let e = errors("p.xml", s);
            if e.is_empty() {
                let p = lossless_policy::parse_policy("p.xml", s).unwrap();
                let g: Vec<&str> = p
                    .port_groups
                    .iter()
                    .map(|g| g.name.value.as_str())
                    .collect();
                format!("{n}: parsed; groups {g:?}")
            } else {
                format!("{n}:\n  {}", e.join("\n  "))
            }
        })
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}
