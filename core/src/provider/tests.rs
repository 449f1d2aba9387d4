//! Every provider's declarations hold together: names are unique, every
//! verbatim field has a reason and an example that holds it, and default
//! paths parse.

use super::*;
use crate::json::Document;

#[test]
fn names_are_unique_and_found() {
    let names = names();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} twice");
        assert_eq!(by_name(name).map(|p| p.name()), Some(*name));
    }
    assert!(by_name("openai").is_none());
}

#[test]
fn every_verbatim_field_has_a_reason_and_an_example_holding_it() {
    for provider in REGISTRY {
        for field in provider.verbatim_fields() {
            let at = format!("{}: {}", provider.name(), field.key);
            // A reason says why the bytes are needed and what a forged one
            // can carry: more than a word or two.
            assert!(field.reason.split_whitespace().count() >= 8, "{at}: reason");
            let doc = Document::parse(field.example.as_bytes())
                .unwrap_or_else(|e| panic!("{at}: example is not JSON: {e}"));
            let held = doc
                .nodes()
                .filter(|&n| doc.kind(n) == crate::json::NodeKind::String)
                .any(|n| field.matches(&doc, n));
            assert!(held, "{at}: the example does not hold the field");
        }
    }
}

#[test]
fn default_paths_parse_and_choose_their_provider() {
    let table = RouteTable::new(Vec::new(), true, GENERIC_JSON);
    for provider in REGISTRY {
        for path in provider.default_paths() {
            assert!(PathPattern::parse(path).is_ok(), "{path}");
            assert_eq!(table.provider_for(path).name(), provider.name(), "{path}");
        }
    }
}
