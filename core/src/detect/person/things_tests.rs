//! Tests of the words that make a run a thing's name: storms, ships and
//! buttons, feasts of the Virgin, an organisation after a particle, a
//! firm of partners.

use super::*;

fn names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    find(text, &NeverMask::default(), &mut out);
    super::super::resolve_overlaps(&mut out);
    out.iter().map(|f| &text[f.start..f.end]).collect()
}

#[test]
fn storms_ships_and_buttons_named_like_people() {
    for text in [
        "How much damage did Hurricane Helene do in Georgia?",
        "Storm Ciarán closed the ferry port for two days.",
        "Il ciclone Boris ha allagato la pianura.",
        "Sturmtief Zoltan sorgt für Hochwasser an der Küste.",
        "La borrasca Filomena dejó nieve en toda la ciudad.",
        "A depressão Martinho trouxe chuva forte ao norte.",
        "Vamos visitar o navio Gil Eannes no sábado.",
        "Il pulsante Salva non risponde su Chrome.",
        "Le bouton Valider reste grisé.",
    ] {
        assert!(names(text).is_empty(), "{text}");
    }
    // A name that is also a ship's or a storm's word stays a person's.
    assert_eq!(names("Ask Bryan Ferry about the call."), ["Bryan Ferry"]);
    assert_eq!(names("Orkan Yılmaz hat angerufen."), ["Orkan Yılmaz"]);
    assert_eq!(names("Mein Hund Bruno und Jens Peters"), ["Jens Peters"]);
}

#[test]
fn a_feast_of_the_virgin_is_no_person() {
    assert!(names("Cerramos el puente de la Inmaculada y el día de la Almudena.").is_empty());
    // Without the article the feast is someone's.
    assert_eq!(names("Vamos a la fiesta de Marta el sábado."), ["Marta"]);
}

#[test]
fn an_organisation_after_a_particle_ends_the_name() {
    assert_eq!(
        names("Me escribió Paloma Urrutia Ríos del Banco Santander ayer."),
        ["Paloma Urrutia Ríos"]
    );
    assert_eq!(
        names("Ha chiamato Sergio Dell'Orto della Banca Popolare per il mutuo."),
        ["Sergio Dell'Orto"]
    );
    assert_eq!(
        names("Un conseiller, Rémi Dos Santos de la Caisse d'Épargne, a rappelé."),
        ["Rémi Dos Santos"]
    );
    // A place word last, or before a surname, is the surname's part.
    assert_eq!(
        names("Llamó Carlos del Río Sánchez."),
        ["Carlos del Río Sánchez"]
    );
}

#[test]
fn a_place_word_after_a_particle_is_part_of_a_surname() {
    assert_eq!(
        names("Habla con Tomás del Valle mañana."),
        ["Tomás del Valle"]
    );
    assert_eq!(
        names("Scrivi a Lorenzo Dalla Chiesa oggi."),
        ["Lorenzo Dalla Chiesa"]
    );
    assert_eq!(
        names("Appelle Mathieu du Pont demain."),
        ["Mathieu du Pont"]
    );
    // Not a place word the lists know as no surname: the airport.
    assert!(names("Le vol part de l'aéroport Charles de Gaulle.").is_empty());
    assert!(names("On veut voir le porte-avions Charles de Gaulle.").is_empty());
}

#[test]
fn a_firm_of_partners_is_no_person() {
    assert!(names("Cuenta: Ortega y Asociados. Fase: propuesta.").is_empty());
    assert!(names("Il fornitore è Bassi e Figli di Modena.").is_empty());
    // Two people joined by `and` stay people.
    assert_eq!(
        names("Ho sentito Bassi e Moretti ieri."),
        ["Bassi", "Moretti"]
    );
}

#[test]
fn a_holiday_a_car_and_a_restaurant_named_like_people() {
    assert!(names("We close early on Valentine's Day.").is_empty());
    assert!(names("Vaut-il mieux une Renault Mégane ou une Dacia ?").is_empty());
    assert!(names("Prefiero un Seat León para la ciudad.").is_empty());
    assert!(names("Stasera si cena da Da Gino in centro.").is_empty());
    // Someone's day, someone after a preposition, a surname after `Da`.
    assert_eq!(names("Maria's day off is Friday."), ["Maria"]);
    assert_eq!(names("Gib das bitte an Malte weiter."), ["Malte"]);
    assert_eq!(names("Ho scritto a Lucia Da Ponte."), ["Lucia Da Ponte"]);
}

#[test]
fn an_eponym_a_gallery_and_a_reform_named_after_people() {
    assert!(names("Can you explain the Monty Hall problem?").is_empty());
    assert!(names("She won the Hans Fischer prize last year.").is_empty());
    assert!(names("Siamo stati alla Galleria Vittorio Emanuele ieri.").is_empty());
    assert!(names("Il bonus Renzi è ancora valido?").is_empty());
    // A person before a noun without the article stays one.
    assert_eq!(names("Ask Monty Hall problem sets."), ["Monty Hall"]);
}

#[test]
fn trades_beside_a_name_and_plural_titles() {
    assert_eq!(
        names("Segundo o Anderson, o orçamento da Marcenaria Silva continua pendente."),
        ["Anderson"]
    );
    assert!(names("The quote from Hughes Joinery is still pending.").is_empty());
    assert_eq!(
        names("Reunión con los Sres. Covarrubias el martes."),
        ["Covarrubias"]
    );
}

#[test]
fn an_elided_preposition_before_a_given_name_is_not_the_name() {
    assert_eq!(
        names("Voici le dossier d'Antoine Martin et celui d'Élodie."),
        ["Antoine Martin", "Élodie"]
    );
    assert_eq!(names("Il compleanno d'Andrea è domani."), ["Andrea"]);
    // A surname's own elision stays.
    assert_eq!(
        names("I'm O'Brien and she's D'Angelo."),
        ["O'Brien", "D'Angelo"]
    );
}

#[test]
fn a_forum_named_after_someone() {
    assert!(names("Die Praxis liegt neben dem Humboldt-Forum.").is_empty());
}

#[test]
fn a_public_building_and_a_builder_named_after_someone() {
    assert!(names("La médiathèque Marguerite-Duras est fermée le lundi.").is_empty());
    assert!(names("Objet : relance facture Martin Bâtiment").is_empty());
}
