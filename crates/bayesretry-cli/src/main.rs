//! `bayesretry`, the command-line tool of BayesRetry; everything it does lives in
//! the `bayesretry_cli` library, which this binary calls with the process's
//! arguments and standard streams.

fn main() -> std::process::ExitCode {
    bayesretry_cli::main()
}
