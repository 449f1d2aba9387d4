//! How the person detector folds a word before it looks it up: lower case,
//! diacritics removed. Its own file, with no `use` of the crate, because
//! `core/build.rs` includes it too (`#[path]`) and folds the word lists
//! with it at build time: the keys it writes and the words read from a
//! text then fold by the very same function.

/// `word` in lower case without diacritics (`Lucía` → `lucia`, `Müller` →
/// `muller`, `ß` → `ss`), apostrophes as `'`; what the lists are keyed by.
pub(super) fn fold(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    fold_into(word, &mut out);
    out
}

/// [`fold`] into `out` (cleared first).
pub(super) fn fold_into(word: &str, out: &mut String) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        match base_letter(c) {
            Some(base) => out.push_str(base),
            None => out.extend(c.to_lowercase()),
        }
    }
}

/// The base letters of a Latin letter with a diacritic (either case).
fn base_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å'
        | 'Ā' | 'Ă' | 'Ą' => "a",
        'æ' | 'Æ' => "ae",
        'ç' | 'ć' | 'č' | 'ĉ' | 'Ç' | 'Ć' | 'Č' => "c",
        'ď' | 'đ' | 'Ď' | 'Đ' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' | 'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ė' | 'Ę'
        | 'Ě' => "e",
        'ğ' | 'Ğ' => "g",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'ı' | 'İ' | 'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' => "i",
        'ł' | 'ľ' | 'Ł' | 'Ľ' => "l",
        'ñ' | 'ń' | 'ň' | 'Ñ' | 'Ń' | 'Ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'Ō'
        | 'Ő' => "o",
        'œ' | 'Œ' => "oe",
        'ř' | 'Ř' => "r",
        'ś' | 'š' | 'ş' | 'ș' | 'Ś' | 'Š' | 'Ş' | 'Ș' => "s",
        'ß' => "ss",
        'ť' | 'ţ' | 'ț' | 'Ť' | 'Ţ' | 'Ț' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' | 'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' | 'Ů' | 'Ű' => {
            "u"
        }
        'ý' | 'ÿ' | 'Ý' => "y",
        'ź' | 'ż' | 'ž' | 'Ź' | 'Ż' | 'Ž' => "z",
        '’' | 'ʼ' | '‘' => "'",
        'ơ' | 'Ơ' => "o",
        'ư' | 'Ư' => "u",
        // Vietnamese letters with two marks (`Nguyễn Thị`): the Latin
        // Extended Additional block from U+1EA0, pairs of upper and lower.
        '\u{1ea0}'..='\u{1eb7}' => "a",
        '\u{1eb8}'..='\u{1ec7}' => "e",
        '\u{1ec8}'..='\u{1ecb}' => "i",
        '\u{1ecc}'..='\u{1ee3}' => "o",
        '\u{1ee4}'..='\u{1ef1}' => "u",
        '\u{1ef2}'..='\u{1ef9}' => "y",
        _ => return None,
    })
}
