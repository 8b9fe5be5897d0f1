//! The `karplint` binary: everything happens in [`karplint::cli::run`]; this only exits.

#![forbid(unsafe_code)]

fn main() {
    std::process::exit(karplint::cli::run());
}
