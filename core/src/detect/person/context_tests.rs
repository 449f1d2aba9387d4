//! Tests of the rules that read the words around a run: a form's firm
//! label, going to a place, a possessive, a noun whose complement is a
//! person, a name said of someone else.

use super::*;

fn names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    find(text, &NeverMask::default(), &mut out);
    super::super::resolve_overlaps(&mut out);
    out.iter().map(|f| &text[f.start..f.end]).collect()
}

#[test]
fn a_firm_after_a_form_label_is_no_person() {
    for text in [
        "Empresa: Souza Cruz. Fase: negociação.",
        "Azienda: Bianchi e Ferri S.p.A. Fase: trattativa.",
        "Société : Dupont et Martin Associés. Étape : proposition.",
        "Account: Morgan Stanley Wealth. Notes: renewal risk high.",
    ] {
        assert!(names(text).is_empty(), "{text}");
    }
    // A given name first is a person's (`Firma:` signs in Spanish).
    assert_eq!(names("Firma: Juan Pérez"), ["Juan Pérez"]);
}

#[test]
fn a_place_named_like_a_person_after_going_to_it() {
    assert!(names("Voy a Santiago en agosto, ¿qué ruta me recomiendas?").is_empty());
    assert!(names("Vou visitar Santiago em março.").is_empty());
    // Without a word of going, `a` leads to a person.
    assert_eq!(names("Llamé a Santiago ayer por la tarde."), ["Santiago"]);
}

#[test]
fn possessives_before_kin_and_names() {
    assert_eq!(
        names("Mein Mann Jürgen will den Keller ausbauen."),
        ["Jürgen"]
    );
    assert_eq!(names("Mi Mari dice que la paella lleva garrofó."), ["Mari"]);
    // The husband in lower case is no name.
    assert!(names("Mon mari veut changer la voiture.").is_empty());
}

#[test]
fn a_person_after_a_noun_of_life_and_works() {
    assert_eq!(
        names("riassumimi la vita di Garibaldi per una ricerca"),
        ["Garibaldi"]
    );
    assert_eq!(
        names("Fass mir das Leben von Bismarck zusammen"),
        ["Bismarck"]
    );
    assert_eq!(names("Resume a vida de Camões em cinco frases"), ["Camões"]);
    assert_eq!(
        names("resúmeme la biografía de Cervantes en cinco líneas"),
        ["Cervantes"]
    );
    // Not after a place's preposition, nor after `obra` (building work).
    assert!(names("a obra em Vila Nova de Gaia. Qualquer dúvida").is_empty());
}

#[test]
fn departments_and_firms_of_partners_are_no_persons() {
    assert!(names("Good morning, the office is closed.\n\nRegards, Facilities").is_empty());
    assert!(names("Firma: Müller Schmidt Partner mbB. Phase: Angebot.").is_empty());
    assert!(names("die Rechnung des Klinikums Rudolf Virchow für Februar").is_empty());
}

#[test]
fn a_name_said_of_someone_else_in_lower_case() {
    assert_eq!(
        names("meine Kollegin heißt anja und hat morgen Geburtstag"),
        ["anja"]
    );
    assert_eq!(
        names("ma collègue s'appelle nadège et c'est son anniversaire"),
        ["nadège"]
    );
    assert_eq!(
        names("minha chefe se chama luana e quer o relatório"),
        ["luana"]
    );
    // `morgen` of `Guten Morgen` greets only where a greeting stands.
    assert_eq!(names("Guten Morgen Kalle, wie geht's?"), ["Kalle"]);
    assert!(names("Er hat morgen Geburtstag, schreib ihm.").is_empty());
    // `das heißt` (that is) before a word that is no name.
    assert!(names("das heißt nicht, dass wir warten").is_empty());
}

#[test]
fn a_name_key_inside_a_tool_calls_arguments() {
    // The `"nome":` cue stands inside the window of the `"name":` cue
    // before it: its value is read and looked up in full.
    let text = r#"{"name": "cerca_cliente", "arguments": {"nome": "rosaria esposito", "citta": "Napoli"}}"#;
    assert_eq!(names(text), ["rosaria esposito"]);
    let text = r#"{"name": "cerca", "arguments": {"nome": "rosaria esposito"}}"#;
    assert_eq!(names(text), ["rosaria esposito"]);
}

#[test]
fn an_unknown_surname_last_in_a_quoted_name_value() {
    let text = r#"{"customer_name": "harriet beaumont", "city": "Leeds"}"#;
    assert_eq!(names(text), ["harriet beaumont"]);
    let text =
        r#"{"name": "kunde_suchen", "arguments": {"name": "henrike lorenzen", "ort": "Kiel"}}"#;
    assert_eq!(names(text), ["henrike lorenzen"]);
    // Not a word that goes on past the value's end, nor one after an
    // unknown first word.
    let text = r#"{"name": "henrike lorenzen und co"}"#;
    assert_eq!(names(text), ["henrike"]);
    let text = r#"{"name": "weekly report"}"#;
    assert!(names(text).is_empty());
}

#[test]
fn a_street_corner_and_a_routes_start_are_places() {
    assert!(names("Quedamos en la calle Mayor, esquina con Lope de Vega, a las ocho.").is_empty());
    assert!(names("¿Cuál es el mejor camino para ir de Santiago a Valparaíso?").is_empty());
    // A person between `de` and `a` without a place after: still a person.
    assert_eq!(names("Un saludo de Santiago a todos."), ["Santiago"]);
}

#[test]
fn people_known_by_one_name_and_plans_named_after_them() {
    assert_eq!(names("Ieri ho visto Totti allo stadio."), ["Totti"]);
    assert_eq!(names("Is Messi better than Ronaldo?"), ["Messi", "Ronaldo"]);
    assert!(names("O cliente prefere o plano Camões ao plano Pessoa.").is_empty());
    assert!(names("Le client préfère la formule Molière.").is_empty());
}

#[test]
fn a_greetings_word_in_prose_greets_no_one() {
    // `morning` of `good morning` ends a sentence: the next one's first
    // word (`Can`, a Turkish given name too) is not greeted.
    assert_eq!(
        names("Hi, I'm Eilidh MacLeod and I can't log in since this morning. Can you reset it?"),
        ["Eilidh MacLeod"]
    );
    // A sign-off under its greeting still is.
    assert_eq!(names("Thanks,\nRob"), ["Rob"]);
    assert_eq!(names("Good morning Kalle, hi"), ["Kalle"]);
}

#[test]
fn a_capitalised_article_first_in_its_sentence_before_a_place() {
    assert!(names("The Wellington office closes early. In Florence we stay two days.").is_empty());
    // Not before a given name the lists know as no place.
    assert_eq!(names("The Sarah I told you about called."), ["Sarah"]);
}

#[test]
fn an_article_and_a_noun_before_a_particle_are_not_the_name() {
    assert_eq!(names("Der Vorschlag von Sven war gut."), ["Sven"]);
    assert_eq!(names("El libro de Jimena está en la mesa."), ["Jimena"]);
}

#[test]
fn a_surname_a_comma_and_a_given_name_in_a_labels_value() {
    let text = r#"{"nombre": "quintero, marta", "ciudad": "Málaga"}"#;
    assert_eq!(names(text), ["quintero, marta"]);
    let text = r#"{"kundenname": "schulze, dörte", "tarif": "Pro"}"#;
    assert_eq!(names(text), ["schulze, dörte"]);
    // Not when the value goes on past the given name.
    let text = r#"{"nombre": "quintero, marta y asociados"}"#;
    assert_eq!(names(text), ["quintero"]);
}

#[test]
fn a_lower_case_name_after_meeting_someone_or_a_role() {
    assert_eq!(
        names("hablé con maría josé ayer y dice que sí"),
        ["maría josé"]
    );
    assert_eq!(
        names("ho sentito carla stamattina, dice che va bene"),
        ["carla"]
    );
    assert_eq!(names("hab mit jens telefoniert, passt"), ["jens"]);
    assert_eq!(names("j'ai vu amélie hier soir"), ["amélie"]);
    assert_eq!(
        names("Visita: atendí a la encargada, susana lópez, y al dueño."),
        ["susana lópez"]
    );
    assert_eq!(
        names("Gespräch mit der Geschäftsführerin, martina vogel; sie will zahlen."),
        ["martina vogel"]
    );
    // A word that is no given name after them stays prose.
    assert!(names("hab mit mama telefoniert").is_empty());
}

#[test]
fn kin_a_closing_parenthesis_and_a_places_key() {
    assert_eq!(
        names("dile a la tía conchi que la cena es a las nueve"),
        ["conchi"]
    );
    assert_eq!(
        names("Reclamación (cliente: sr. benigno ocaña) por doble cobro."),
        ["benigno ocaña"]
    );
    assert!(names(r#"{"localita": "Marina di Pietrasanta", "max": 18}"#).is_empty());
}

#[test]
fn a_title_that_is_also_a_preposition_in_lower_case_titles_no_one() {
    assert!(names("I posted it on Slack and deployed on Heroku.").is_empty());
    // A title in lower case that is no preposition still titles.
    assert_eq!(names("Chiama il dott. Bianchi domani."), ["Bianchi"]);
}

#[test]
fn a_document_sent_to_someone_and_a_quantity_after_a_cue() {
    assert_eq!(
        names("envoie le rapport à margaux et à baptiste avant lundi"),
        ["margaux", "baptiste"]
    );
    assert!(names("wir kommen mit max. 2 koffern").is_empty());
}

#[test]
fn a_routes_end_after_a_word_of_going_and_its_start() {
    assert!(names("Flights from Madison to Charlotte next Tuesday?").is_empty());
    assert!(names("What is the fastest route from Jackson, Mississippi to Charlotte?").is_empty());
    // A message from one person to another: no word of going.
    assert_eq!(
        names("Forward the note from Priya to Charlotte."),
        ["Priya", "Charlotte"]
    );
}

#[test]
fn thanks_before_a_lower_case_name_and_a_list_of_surnames() {
    assert_eq!(names("ok grazie mille marta, a domani"), ["marta"]);
    assert_eq!(names("thanks aisha, talk tomorrow"), ["aisha"]);
    assert!(names("thanks again for the help").is_empty());
    assert_eq!(
        names("Partecipanti: Bianchi, Ferrari, Romano."),
        ["Bianchi", "Ferrari", "Romano"]
    );
    assert_eq!(names("Autore: Rossi, Mario."), ["Rossi, Mario"]);
}
