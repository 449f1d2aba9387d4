//! A value found in the detectors' folded reading (Unicode spaces inside a
//! number, full-width forms: see `crate::detect::fold`) is derived from its
//! folded form, and its surrogate written back in the value's spelling:
//! `+39\u{a0}347…` keeps its no-break spaces, `＋３９ ３４７…` stays
//! full-width, `mario＠example.org` keeps its full-width `＠`.

use crate::detect::fold::fold_char;

/// `value` folded, when folding changes it.
pub fn fold(value: &str) -> Option<String> {
    if value.is_ascii() || !value.chars().any(|c| fold_char(c).is_some()) {
        return None;
    }
    Some(
        value
            .chars()
            .map(|c| fold_char(c).map_or(c, char::from))
            .collect(),
    )
}

/// `c` (ASCII) in full width, when it has a full-width form.
fn widen(c: char) -> char {
    match c {
        '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xff01).unwrap_or(c),
        _ => c,
    }
}

fn is_full_width(c: char) -> bool {
    ('\u{ff01}'..='\u{ff5e}').contains(&c)
}

/// `surrogate` (derived from the folded `value`) in `value`'s spelling.
///
/// A surrogate of as many chars as the value (phones, cards, IBANs,
/// addresses: formats that replace char for char) takes, at each position
/// the value folded, the value's spelling: full width again, or the
/// value's own space or dash. Otherwise (an e-mail's new local part and
/// domain): all full width when the value is, else a full-width `＠` when
/// the value's was.
pub fn unfold(value: &str, surrogate: &str) -> String {
    if value.chars().count() == surrogate.chars().count() {
        return value
            .chars()
            .zip(surrogate.chars())
            .map(|(v, s)| match fold_char(v) {
                Some(_) if is_full_width(v) => widen(s),
                Some(folded) if char::from(folded) == s => v,
                _ => s,
            })
            .collect();
    }
    if value.chars().all(is_full_width) {
        return surrogate.chars().map(widen).collect();
    }
    if value.contains('＠') {
        if let Some((local, domain)) = surrogate.rsplit_once('@') {
            return format!("{local}＠{domain}");
        }
    }
    surrogate.to_string()
}
