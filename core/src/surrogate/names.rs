//! Lists of first and last names by language, for person-name and e-mail
//! surrogates. Every entry is one word (no spaces) so a surrogate keeps the
//! value's number of words; apostrophes are fine in JSON.

use super::rng::SeedRng;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The first and last names of one language.
pub struct NameList {
    /// First names, mixed genders.
    pub first: &'static [&'static str],
    /// Family names.
    pub last: &'static [&'static str],
}

/// Every list, in a fixed order (part of the derivation: do not reorder
/// without accepting that every surrogate of a name changes for new values).
pub const NAME_LISTS: &[NameList] = &[ITALIAN, SPANISH, GERMAN, FRENCH, ENGLISH, PORTUGUESE];

#[rustfmt::skip]
const ITALIAN: NameList = NameList {
    first: &[
        "Mario", "Luca", "Marco", "Giuseppe", "Giovanni", "Francesco", "Alessandro", "Andrea",
        "Matteo", "Lorenzo", "Davide", "Simone", "Federico", "Riccardo", "Stefano", "Paolo",
        "Roberto", "Antonio", "Nicola", "Fabio", "Gabriele", "Tommaso", "Emanuele", "Niccolò",
        "Pietro", "Salvatore", "Vincenzo", "Filippo", "Edoardo", "Michele", "Laura", "Giulia",
        "Francesca", "Chiara", "Sara", "Martina", "Valentina", "Alessia", "Elena", "Silvia",
        "Federica", "Anna", "Maria", "Paola", "Elisa", "Giorgia", "Beatrice", "Alice", "Camilla",
        "Ilaria", "Serena", "Marta", "Roberta", "Veronica", "Benedetta", "Lucia", "Noemi",
        "Aurora", "Greta", "Rosaria", "Alberto", "Claudio", "Enrico", "Giorgio", "Massimo",
        "Sergio", "Daniele", "Raffaele", "Leonardo", "Diego", "Bruno", "Carlo", "Fabrizio",
        "Giacomo", "Luigi", "Manuel", "Ottavio", "Renato", "Ugo", "Vittorio", "Arianna",
        "Caterina", "Cristina", "Daniela", "Emma", "Gaia", "Irene", "Letizia", "Margherita",
        "Monica", "Nadia", "Ornella", "Patrizia", "Rita", "Sofia", "Teresa", "Viola", "Bianca",
        "Carla", "Donatella",
    ],
    last: &[
        "Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino",
        "Greco", "Bruno", "Gallo", "Conti", "Lombardo", "Mancini", "Costa", "Giordano", "Rizzo",
        "Lombardi", "Moretti", "Barbieri", "Fontana", "Santoro", "Mariani", "Rinaldi", "Caruso",
        "Ferrara", "Galli", "Martini", "Leone", "Longo", "Gentile", "Martinelli", "Vitale",
        "Serra", "Coppola", "D'Angelo", "Marchetti", "Parisi", "Villa", "Conte", "Ferraro",
        "Fabbri", "Bianco", "Marini", "Grasso", "Valentini", "Messina", "Sala", "Gatti",
        "Pellegrini", "Palumbo", "Sanna", "Farina", "Monti", "Cattaneo", "Morelli", "Amato",
        "Silvestri", "Mazza", "Testa", "Carbone", "Giuliani", "Benedetti", "Barone", "Caputo",
        "Montanari", "Guerra", "Palmieri", "Bernardi", "Fiore", "Sartori", "Zanetti", "Pozzi",
        "Bellini", "Cirillo", "Orlando", "Ruggiero", "Negri", "Basile", "Ferri", "Rossetti",
        "Donati", "Bellucci", "Ferretti", "Marchi", "Riva", "Neri", "Bassi", "Bonetti",
        "Brambilla", "Cavallo", "Colombi", "Corsi", "Cristiani", "Santangelo", "Fumagalli",
        "Gallina", "Grassi", "Lupo", "Magri", "Mele", "Mazzoni", "Melis", "Moro", "Nardi",
        "Olivieri", "Pace", "Piras", "Poli", "Rocca", "Sorrentino", "Tedesco", "Trevisan",
        "Vitali", "Zanella", "Zago", "Bertolini", "Guidi",
    ],
};

#[rustfmt::skip]
const SPANISH: NameList = NameList {
    first: &[
        "José", "Antonio", "Manuel", "Francisco", "David", "Juan", "Javier", "Daniel", "Carlos",
        "Jesús", "Alejandro", "Miguel", "Rafael", "Pablo", "Sergio", "Fernando", "Jorge",
        "Alberto", "Luis", "Álvaro", "Diego", "Adrián", "Raúl", "Iván", "Rubén", "Óscar", "Andrés",
        "Ignacio", "Gonzalo", "Hugo", "María", "Carmen", "Ana", "Isabel", "Laura", "Cristina",
        "Marta", "Lucía", "Elena", "Pilar", "Sara", "Paula", "Raquel", "Rosa", "Beatriz",
        "Patricia", "Silvia", "Nuria", "Irene", "Alba", "Andrea", "Sofía", "Claudia", "Inés",
        "Marina", "Julia", "Noelia", "Rocío", "Lorena", "Montserrat", "Enrique", "Ramón",
        "Vicente", "Joaquín", "Emilio", "Marcos", "Víctor", "Héctor", "Mario", "Salvador", "Tomás",
        "Agustín", "Lorenzo", "Julio", "Mateo", "Nicolás", "Santiago", "Eduardo", "Guillermo",
        "Rodrigo", "Teresa", "Dolores", "Mercedes", "Josefa", "Encarnación", "Consuelo", "Esther",
        "Lourdes", "Alicia", "Miriam", "Eva", "Natalia", "Rebeca", "Ainhoa", "Nerea", "Itziar",
        "Amparo", "Victoria", "Celia", "Aurora",
    ],
    last: &[
        "García", "Rodríguez", "González", "Fernández", "López", "Martínez", "Sánchez", "Pérez",
        "Gómez", "Martín", "Jiménez", "Ruiz", "Hernández", "Díaz", "Moreno", "Muñoz", "Álvarez",
        "Romero", "Alonso", "Gutiérrez", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos",
        "Gil", "Ramírez", "Serrano", "Blanco", "Molina", "Morales", "Suárez", "Ortega", "Delgado",
        "Castro", "Ortiz", "Rubio", "Marín", "Sanz", "Núñez", "Iglesias", "Medina", "Garrido",
        "Cortés", "Castillo", "Santos", "Lozano", "Guerrero", "Cano", "Prieto", "Méndez", "Cruz",
        "Calvo", "Gallego", "Vidal", "León", "Márquez", "Herrera", "Peña", "Flores", "Cabrera",
        "Campos", "Vega", "Fuentes", "Carrasco", "Caballero", "Reyes", "Nieto", "Aguilar",
        "Pascual", "Herrero", "Montero", "Hidalgo", "Ibáñez", "Ferrer", "Durán", "Benítez",
        "Vargas", "Crespo", "Soler", "Domingo", "Rivera", "Bermúdez", "Pardo", "Quintana",
        "Salinas", "Escobar", "Figueroa", "Aguirre", "Arroyo", "Bautista", "Carmona", "Rojas",
        "Soto", "Sáez", "Velasco", "Moya", "Parra", "Esteban", "Bravo", "Gallardo", "Mendoza",
        "Robles", "Varela", "Zamora", "Osorio", "Lara", "Toledo", "Sosa", "Manzano", "Solís",
        "Vera", "Luque", "Maldonado", "Cuesta", "Pacheco", "Miranda", "Galán", "Benito", "Mora",
    ],
};

#[rustfmt::skip]
const GERMAN: NameList = NameList {
    first: &[
        "Lukas", "Leon", "Jonas", "Felix", "Maximilian", "Paul", "Elias", "Noah", "Finn", "Ben",
        "Jan", "Tim", "Niklas", "Moritz", "Julian", "Tobias", "Florian", "Sebastian", "Stefan",
        "Michael", "Andreas", "Markus", "Matthias", "Jürgen", "Uwe", "Klaus", "Dieter", "Jörg",
        "Björn", "Wolfgang", "Hans", "Peter", "Karl", "Anna", "Lena", "Lea", "Hannah", "Sophie",
        "Emma", "Mia", "Lara", "Katharina", "Johanna", "Leonie", "Marie", "Jana", "Sabine",
        "Petra", "Claudia", "Ursula", "Monika", "Susanne", "Birgit", "Heike", "Anja", "Franziska",
        "Greta", "Frieda", "Charlotte", "Helene", "Ingrid", "Gisela", "Käthe", "Thomas", "Frank",
        "Uli", "Rainer", "Holger", "Volker", "Bernd", "Ralf", "Günter", "Horst", "Helmut",
        "Werner", "Dirk", "Sven", "Lars", "Jens", "Kai", "Timo", "Malte", "Henrik", "Ulrike",
        "Brigitte", "Renate", "Elke", "Karin", "Martina", "Nicole", "Stefanie", "Tanja", "Silke",
        "Doris", "Gabriele", "Andrea", "Bettina", "Carina", "Dagmar", "Elisabeth", "Svenja",
        "Wiebke", "Lotte",
    ],
    last: &[
        "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker",
        "Schulz", "Hoffmann", "Schäfer", "Koch", "Bauer", "Richter", "Klein", "Wolf", "Schröder",
        "Neumann", "Schwarz", "Zimmermann", "Braun", "Krüger", "Hofmann", "Hartmann", "Lange",
        "Schmitt", "Werner", "Schmitz", "Krause", "Meier", "Lehmann", "Schmid", "Schulze", "Maier",
        "Köhler", "Herrmann", "König", "Walter", "Mayer", "Huber", "Kaiser", "Fuchs", "Peters",
        "Lang", "Scholz", "Möller", "Weiß", "Jung", "Hahn", "Schubert", "Vogel", "Friedrich",
        "Keller", "Günther", "Frank", "Berger", "Winkler", "Roth", "Beck", "Lorenz", "Baumann",
        "Franke", "Albrecht", "Schuster", "Ludwig", "Böhm", "Winter", "Kraus", "Schumacher",
        "Krämer", "Vogt", "Stein", "Jäger", "Otto", "Sommer", "Groß", "Seidel", "Heinrich",
        "Brandt", "Haas", "Pohl", "Engel", "Horn", "Busch", "Bergmann", "Thomas", "Voigt", "Sauer",
        "Arnold", "Wolff", "Pfeiffer", "Ziegler", "Kühn", "Kuhn", "Dietrich", "Ernst", "Gross",
        "Marx", "Schreiber", "Graf", "Schulte", "Dietz", "Kurz", "Zimmer", "Hempel", "Reuter",
        "Ritter", "Fiedler", "Wendt", "Nowak", "Schwab", "Strauß", "Hübner", "Jansen", "Lindner",
        "Vogl", "Beyer", "Böttcher",
    ],
};

#[rustfmt::skip]
const FRENCH: NameList = NameList {
    first: &[
        "Jean", "Pierre", "Michel", "Philippe", "Alain", "Nicolas", "François", "Julien",
        "Antoine", "Louis", "Hugo", "Lucas", "Théo", "Mathieu", "Guillaume", "Sébastien",
        "Olivier", "Christophe", "Laurent", "Étienne", "Benoît", "Jérôme", "Rémi", "Arnaud",
        "Maxime", "Bastien", "Cédric", "Yves", "Gérald", "Loïc", "Marie", "Nathalie", "Isabelle",
        "Sylvie", "Catherine", "Françoise", "Valérie", "Sophie", "Céline", "Julie", "Camille",
        "Léa", "Chloé", "Manon", "Inès", "Zoé", "Élodie", "Aurélie", "Amélie", "Margaux", "Océane",
        "Clémence", "Hélène", "Agnès", "Mathilde", "Juliette", "Pauline", "Solène", "Anaïs",
        "Maëlle", "Henri", "Bernard", "Claude", "Daniel", "Didier", "Emmanuel", "Fabrice",
        "Gilles", "Hervé", "Jacques", "Lionel", "Marc", "Noël", "Pascal", "Patrice", "Raphaël",
        "Serge", "Thierry", "Vincent", "Xavier", "Adèle", "Brigitte", "Capucine", "Delphine",
        "Émilie", "Florence", "Géraldine", "Josiane", "Laetitia", "Lucie", "Martine", "Monique",
        "Nadège", "Odile", "Perrine", "Régine", "Sandrine", "Thérèse", "Virginie", "Yvette",
    ],
    last: &[
        "Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy",
        "Moreau", "Simon", "Laurent", "Lefebvre", "Michel", "David", "Bertrand", "Roux", "Vincent",
        "Fournier", "Morel", "Girard", "André", "Lefèvre", "Mercier", "Dupont", "Lambert",
        "Bonnet", "François", "Legrand", "Garnier", "Faure", "Rousseau", "Blanc", "Guérin",
        "Henry", "Roussel", "Perrin", "Morin", "Mathieu", "Clément", "Gauthier", "Dumont",
        "Fontaine", "Chevalier", "Robin", "Masson", "Gérard", "Boyer", "Denis", "Lemaire", "Duval",
        "Joly", "Gautier", "Roger", "Roche", "Noël", "Meunier", "Marchand", "Dufour", "Blanchard",
        "Barbier", "Brun", "Dumas", "Brunet", "Leroux", "Colin", "Renard", "Arnaud", "Rolland",
        "Caron", "Aubert", "Giraud", "Leclerc", "Bourgeois", "Renaud", "Lemoine", "Picard",
        "Gaillard", "Lacroix", "Rivière", "Marchal", "Aubry", "Vasseur", "Renault", "Jacquet",
        "Collet", "Prévost", "Poirier", "Charpentier", "Royer", "Huet", "Baron", "Dupuy", "Pons",
        "Lemaître", "Carré", "Breton", "Rémy", "Perrot", "Guyot", "Barre", "Marty", "Cousin",
        "Bouvier", "Besson", "Langlois", "Bailly", "Hamon", "Lebrun", "Gilbert", "Tessier",
        "Chauvin", "Leblanc", "Bouchet", "Navarre", "Hoarau", "Ferrand", "Benard", "Lemoigne",
        "Delmas",
    ],
};

#[rustfmt::skip]
const ENGLISH: NameList = NameList {
    first: &[
        "James", "John", "Robert", "Michael", "William", "David", "Richard", "Joseph", "Thomas",
        "Charles", "Daniel", "Matthew", "Andrew", "Mark", "Paul", "Steven", "Kevin", "Brian",
        "George", "Edward", "Oliver", "Harry", "Jack", "Henry", "Samuel", "Benjamin", "Liam",
        "Ethan", "Nathan", "Ryan", "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara",
        "Susan", "Jessica", "Sarah", "Karen", "Emily", "Emma", "Olivia", "Charlotte", "Amelia",
        "Sophia", "Grace", "Hannah", "Rachel", "Rebecca", "Laura", "Megan", "Lucy", "Chloe",
        "Abigail", "Madison", "Victoria", "Alice", "Evelyn", "Harper", "Christopher", "Anthony",
        "Donald", "Kenneth", "Joshua", "Timothy", "Jason", "Jeffrey", "Gary", "Eric", "Stephen",
        "Jonathan", "Scott", "Justin", "Peter", "Adam", "Alexander", "Patrick", "Simon", "Connor",
        "Nancy", "Lisa", "Betty", "Sandra", "Ashley", "Kimberly", "Donna", "Michelle", "Carol",
        "Amanda", "Melissa", "Deborah", "Stephanie", "Sharon", "Cynthia", "Kathleen", "Amy",
        "Angela", "Helen", "Brenda",
    ],
    last: &[
        "Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson", "Anderson",
        "Taylor", "Thomas", "Moore", "Jackson", "White", "Harris", "Clark", "Lewis", "Robinson",
        "Walker", "Young", "Allen", "King", "Wright", "Scott", "Hill", "Green", "Adams", "Baker",
        "Nelson", "Carter", "Mitchell", "Roberts", "Turner", "Phillips", "Campbell", "Parker",
        "Evans", "Edwards", "Collins", "Stewart", "Morris", "Murphy", "Cook", "Rogers", "Morgan",
        "Cooper", "Peterson", "Bailey", "Reed", "Kelly", "Howard", "Ward", "Cox", "Richardson",
        "Wood", "Watson", "Brooks", "Bennett", "Gray", "Hughes", "Price", "Sanders", "Foster",
        "Powell", "Sullivan", "Russell", "O'Brien", "Fisher", "Palmer", "Walsh", "Hunt", "Barnes",
        "Fletcher", "Harrison", "Lawson", "Marshall", "Owens", "Porter", "Spencer", "Webb", "Ross",
        "Henderson", "Coleman", "Jenkins", "Perry", "Butler", "Simmons", "Patterson", "Bryant",
        "Alexander", "Griffin", "Hayes", "Myers", "Ford", "Graham", "Wallace", "Hamilton", "Cole",
        "West", "Jordan", "Reynolds", "Ellis", "Stevens", "Tucker", "Gibson", "Mason", "Hart",
        "Knight", "Lloyd", "Dixon", "Holmes", "Rice", "Hunter", "Black", "Ferguson", "Warren",
        "Mills", "Nichols", "Grant",
    ],
};

#[rustfmt::skip]
const PORTUGUESE: NameList = NameList {
    first: &[
        "João", "Pedro", "Tiago", "Rui", "Miguel", "Gonçalo", "Duarte", "Rodrigo", "Afonso",
        "Tomás", "Diogo", "Bruno", "Ricardo", "Nuno", "Luís", "Paulo", "Vítor", "Sérgio", "Fábio",
        "Filipe", "Joaquim", "Henrique", "Martim", "Simão", "Vasco", "Joana", "Inês", "Beatriz",
        "Mariana", "Catarina", "Leonor", "Matilde", "Carolina", "Margarida", "Sofia", "Francisca",
        "Rita", "Patrícia", "Cláudia", "Vânia", "Susana", "Teresa", "Helena", "Luísa", "Isabel",
        "Filipa", "Daniela", "Adriana", "Bárbara", "Lúcia", "Carlos", "Manuel", "José", "António",
        "Francisco", "Jorge", "Mário", "Fernando", "Alexandre", "Gustavo", "Leonardo", "Lucas",
        "Rafael", "Samuel", "Gabriel", "Salvador", "Guilherme", "Xavier", "Lourenço", "Artur",
        "Maria", "Madalena", "Constança", "Alice", "Clara", "Laura", "Benedita", "Camila", "Diana",
        "Eduarda", "Graça", "Ivone", "Lara", "Mafalda", "Marisa", "Nádia", "Rosa", "Sílvia",
        "Tânia", "Yara",
    ],
    last: &[
        "Silva", "Santos", "Ferreira", "Pereira", "Oliveira", "Costa", "Rodrigues", "Martins",
        "Jesus", "Sousa", "Fernandes", "Gonçalves", "Gomes", "Lopes", "Marques", "Alves",
        "Almeida", "Ribeiro", "Pinto", "Carvalho", "Teixeira", "Moreira", "Correia", "Mendes",
        "Nunes", "Soares", "Vieira", "Monteiro", "Cardoso", "Rocha", "Raposo", "Neves", "Coelho",
        "Cunha", "Pires", "Ramos", "Reis", "Simões", "Antunes", "Matos", "Fonseca", "Machado",
        "Araújo", "Barbosa", "Tavares", "Lourenço", "Figueiredo", "Azevedo", "Freitas",
        "Magalhães", "Loureiro", "Brandão", "Guimarães", "Esteves", "Valente", "Batista", "Leite",
        "Morais", "Borges", "Campos", "Vaz", "Sequeira", "Lima", "Paiva", "Pacheco", "Faria",
        "Miranda", "Henriques", "Medeiros", "Macedo", "Barros", "Nogueira", "Amaral", "Quintas",
        "Salgado", "Rebelo", "Sampaio", "Pinheiro", "Torres", "Moura", "Cabral", "Couto", "Dias",
        "Garcia", "Baptista", "Cordeiro", "Domingues", "Estrela", "Ferraz", "Franco", "Gaspar",
        "Jardim", "Lobo", "Mota",
    ],
};

/// Whether a word is known as a first name, a last name, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRole {
    First,
    Last,
}

/// The list and role of the first list entry equal to `word` (accents,
/// case and apostrophes ignored), first names checked before last names.
pub fn lookup(word: &str) -> Option<(usize, NameRole)> {
    let key = fold_ascii_lower(word);
    if key.is_empty() {
        return None;
    }
    lookup_table().get(&key).copied()
}

/// Every listed name, folded both ways (`muller`, `mueller`), to its list
/// and role; the first list and first names win on a tie. Built once.
fn lookup_table() -> &'static HashMap<String, (usize, NameRole)> {
    static TABLE: OnceLock<HashMap<String, (usize, NameRole)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        for role in [NameRole::First, NameRole::Last] {
            for (index, list) in NAME_LISTS.iter().enumerate() {
                let names = match role {
                    NameRole::First => list.first,
                    NameRole::Last => list.last,
                };
                for name in names {
                    table.entry(fold_ascii_lower(name)).or_insert((index, role));
                    table.entry(fold_german(name)).or_insert((index, role));
                }
            }
        }
        table
    })
}

/// A name of `role` from list `language` that repeats no word of the value:
/// never one equal to a word of `avoid`, nor one a word of `avoid` contains
/// (`rossi` in `mrossi`), compared folded. Gives up after a few draws (a
/// one-word list could hold nothing else).
pub fn pick_name(
    rng: &mut SeedRng,
    role: NameRole,
    language: usize,
    avoid: &[String],
) -> &'static str {
    let Some(list) = NAME_LISTS.get(language).or(NAME_LISTS.first()) else {
        return "Alex";
    };
    let names = match role {
        NameRole::First => list.first,
        NameRole::Last => list.last,
    };
    let mut name = rng.pick(names);
    for _ in 0..8 {
        let folded = fold_ascii_lower(name);
        let german = fold_german(name);
        let repeats = avoid.iter().any(|word| {
            *word == folded
                || *word == german
                || (folded.len() >= 3 && word.contains(&folded))
                || (german.len() >= 3 && word.contains(&german))
        });
        if !repeats {
            break;
        }
        name = rng.pick(names);
    }
    name
}

/// The words of a value folded for [`pick_name`]'s `avoid`.
pub fn folded_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    words
        .into_iter()
        .map(fold_ascii_lower)
        .filter(|w| !w.is_empty())
        .collect()
}

/// Index of the German list in [`NAME_LISTS`]: its names fold the German
/// way in e-mail addresses.
pub const GERMAN_LIST: usize = 2;

/// `name` folded as German writes it without umlauts (`Müller` →
/// `mueller`, `Jäger` → `jaeger`), then as [`fold_ascii_lower`].
pub fn fold_german(name: &str) -> String {
    let mut spelled = String::with_capacity(name.len() + 2);
    for c in name.chars().flat_map(char::to_lowercase) {
        match c {
            'ä' => spelled.push_str("ae"),
            'ö' => spelled.push_str("oe"),
            'ü' => spelled.push_str("ue"),
            c => spelled.push(c),
        }
    }
    fold_ascii_lower(&spelled)
}

/// `name` in lower-case ASCII letters only: accents dropped (`Müller` →
/// `muller`, `ß` → `ss`), apostrophes and other marks removed. For e-mail
/// local parts and for comparing names.
pub fn fold_ascii_lower(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' => out.push(c),
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => out.push('a'),
            'è' | 'é' | 'ê' | 'ë' => out.push('e'),
            'ì' | 'í' | 'î' | 'ï' => out.push('i'),
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' => out.push('o'),
            'ù' | 'ú' | 'û' | 'ü' => out.push('u'),
            'ñ' => out.push('n'),
            'ç' => out.push('c'),
            'ß' => out.push_str("ss"),
            'æ' => out.push_str("ae"),
            'œ' => out.push_str("oe"),
            'ÿ' | 'ý' => out.push('y'),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_large_single_words_and_json_safe() {
        assert!(NAME_LISTS.len() >= 5);
        for (language, list) in NAME_LISTS.iter().enumerate() {
            assert!(list.first.len() >= 40, "list {language}");
            assert!(list.last.len() >= 40, "list {language}");
            for name in list.first.iter().chain(list.last.iter()) {
                assert!(!name.is_empty());
                assert!(
                    name.chars().all(|c| c.is_alphabetic() || c == '\''),
                    "{name}"
                );
                assert!(
                    name.chars().next().is_some_and(char::is_uppercase),
                    "{name}"
                );
                assert!(!fold_ascii_lower(name).is_empty(), "{name}");
            }
        }
    }

    #[test]
    fn lookup_finds_names_of_every_language() {
        let cases = [
            ("Mario", Some((0, NameRole::First))),
            ("ROSSI", Some((0, NameRole::Last))),
            ("jose", Some((1, NameRole::First))),
            ("muller", Some((2, NameRole::Last))),
            ("Müller", Some((2, NameRole::Last))),
            ("mueller", Some((2, NameRole::Last))),
            ("Hans", Some((2, NameRole::First))),
            ("dangelo", Some((0, NameRole::Last))),
            ("Xyzzy", None),
            ("", None),
        ];
        for (word, expected) in cases {
            assert_eq!(lookup(word), expected, "{word}");
        }
    }

    #[test]
    fn picked_names_repeat_no_word_of_the_value() {
        let avoid = folded_words(["mrossi", "Mario"]);
        for seed in 0..200u8 {
            let mut rng = SeedRng::from_seed([seed; 32]);
            assert_ne!(pick_name(&mut rng, NameRole::First, 0, &avoid), "Mario");
            assert_ne!(pick_name(&mut rng, NameRole::Last, 0, &avoid), "Rossi");
        }
    }

    #[test]
    fn fold_ascii_lower_drops_accents_and_marks() {
        let cases = [
            ("Niccolò", "niccolo"),
            ("Weiß", "weiss"),
            ("D'Angelo", "dangelo"),
            ("Ñúñez", "nunez"),
        ];
        for (name, folded) in cases {
            assert_eq!(fold_ascii_lower(name), folded);
        }
        for (name, folded) in [
            ("Müller", "mueller"),
            ("Jäger", "jaeger"),
            ("Weiß", "weiss"),
            ("Köhler", "koehler"),
        ] {
            assert_eq!(fold_german(name), folded);
        }
    }
}
