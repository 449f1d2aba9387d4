//! `latet`: the control service (`latet serve`) and its admin CLI (`latet server …`).

fn main() {
    std::process::exit(latet::cli::run(std::env::args_os()));
}
