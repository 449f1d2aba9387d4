//! Surrogate formats the control service derives entries with (rules V4 and
//! V5, docs/product-rules.md).
//!
//! A surrogate is a realistic value of the same kind and shape as the value
//! it stands for (`mario.rossi@acme.it` → `laura.bianchi@brightvale.it`),
//! derived deterministically from a keyed seed of (generation, kind, value,
//! counter): every gateway and the control service compute the same one, a
//! new generation gives a new one, and the control service bumps the counter
//! when a surrogate collides with an active value, an active surrogate or a
//! retired one. A surrogate is never the value itself and never empty.
//!
//! One submodule per format; `shape` (`surrogate/shape.rs`) is the
//! shape-preserving fallback for custom kinds and for values a format does
//! not recognise.

mod card;
mod domain;
mod domain_words;
mod email;
mod iban;
mod ip;
mod names;
mod person;
mod phone;
mod providers;
mod rng;
mod secret;
mod shape;
mod spelling;

use crate::keyed_hash::surrogate_seed;
use crate::Kind;
use rng::SeedRng;

pub use providers::is_provider_domain;

/// How many candidates a format may draw before the shape fallback: a
/// format gives the value back only by chance (a name list holding it), so
/// one more draw almost always suffices.
const MAX_ATTEMPTS: usize = 8;

/// Derives the surrogate of `value` of `kind` under `generation`, from
/// [`crate::keyed_hash::surrogate_seed`]`(derive_key, generation,
/// kind.as_str(), value, counter)`.
///
/// `domain_surrogate`: for [`Kind::Email`] with a company domain, the
/// surrogate of that domain's own entry (the caller creates it first); None
/// otherwise. An e-mail with a company domain and no `domain_surrogate` gets
/// the domain's counter-0 surrogate of this generation.
///
/// The result is never empty and never equal to `value`; checking it against
/// other active values and surrogates, and retired ones, is the caller's job
/// (bump `counter` and derive again).
pub fn derive(
    derive_key: &[u8],
    generation: u64,
    kind: &Kind,
    value: &str,
    counter: u32,
    domain_surrogate: Option<&str>,
) -> String {
    let seed = surrogate_seed(derive_key, generation, kind.as_str(), value, counter);
    let mut rng = SeedRng::from_seed(seed);
    // A value the detectors found in the folded reading (Unicode spaces,
    // full-width forms): the format reads it folded, and the surrogate is
    // written back in the value's spelling.
    let folded = match kind {
        Kind::Email | Kind::Phone | Kind::Iban | Kind::Card | Kind::Ip => spelling::fold(value),
        _ => None,
    };
    let input = folded.as_deref().unwrap_or(value);
    for _ in 0..MAX_ATTEMPTS {
        let candidate = match kind {
            Kind::Email => derive_email(&mut rng, derive_key, generation, input, domain_surrogate),
            Kind::Domain => domain::derive(&mut rng, input),
            Kind::Phone => phone::derive(&mut rng, input),
            Kind::Iban => iban::derive(&mut rng, input),
            Kind::Card => card::derive(&mut rng, input),
            Kind::Ip => ip::derive(&mut rng, input),
            Kind::Secret => Some(secret::derive(&mut rng, input)),
            Kind::Name => Some(person::derive(&mut rng, input)),
            Kind::Custom(_) => None,
        };
        let candidate = match &folded {
            Some(_) => candidate.map(|c| spelling::unfold(value, &c)),
            None => candidate,
        };
        match candidate.map(|c| shape::json_safe(c, kind == &Kind::Secret)) {
            Some(candidate) if candidate != value && !candidate.is_empty() => return candidate,
            Some(_) => continue,
            // Not in the format's shape: every further draw fails the same way.
            None => break,
        }
    }
    shape::mutate(&mut rng, value)
}

/// The domain part of an e-mail value when it is a company domain (None for
/// a provider domain such as gmail.com, or when the value has no valid
/// domain).
pub fn email_company_domain(value: &str) -> Option<&str> {
    let (_, domain) = email::split(value)?;
    domain::parse(domain)?;
    (!is_provider_domain(domain)).then_some(domain)
}

fn derive_email(
    rng: &mut SeedRng,
    derive_key: &[u8],
    generation: u64,
    value: &str,
    domain_surrogate: Option<&str>,
) -> Option<String> {
    let (local, domain) = email::split(value)?;
    domain::parse(domain)?;
    let new_domain = match domain_surrogate {
        Some(surrogate) => surrogate.to_string(),
        None if is_provider_domain(domain) => domain.to_string(),
        // The same surrogate the domain's own entry would get first.
        None => derive(derive_key, generation, &Kind::Domain, domain, 0, None),
    };
    let new_local = email::derive_local(rng, local);
    Some(format!("{new_local}@{new_domain}"))
}

#[cfg(test)]
mod tests;
