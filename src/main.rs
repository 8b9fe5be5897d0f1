//! The `karplint` binary: everything happens in [`karplint::cli::run`]; this only exits.

fn main() {
    std::process::exit(karplint::cli::run());
}
