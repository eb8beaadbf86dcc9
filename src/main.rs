//! The `flowboost` binary: see `flowboost --help`.

use clap::Parser;
use flowboost::cli::{Cli, run};

fn main() {
    let cli = Cli::parse();
    if let Err(message) = run(cli) {
        eprintln!("flowboost: error: {message}");
        std::process::exit(2);
    }
}
