//! [`run`]: parse the command line, run the subcommand, report the outcome.

use std::ffi::OsString;
use std::io::{self, Write};
use std::panic;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use crate::cli::{AuditCommand, Cli, Command};
use crate::error::Error;
use crate::exit::Exit;
use crate::output::Output;
use crate::{audit, bench, inspect, replay, simulate};

/// Runs `bayesretry` with `args` (the program name first), writing reports to
/// `stdout` and errors to `stderr`, and returns the exit status.
///
/// A command line clap rejects gets clap's whole message on `stderr` — what is
/// wrong, then, where clap gives them, the possible values, a tip (a similar
/// flag) and the usage — and status 64 ([`Exit::Usage`]). Any other error is
/// one line on `stderr`, `error: ` and its [report](Error::report): the message
/// and its causes. Help and `--version` go to `stdout` with status 0 (74,
/// [`Exit::Io`], with one line on `stderr`, when they cannot be written). When
/// `stdout` is closed early (`bayesretry ... | head`), the run ends quietly
/// with status 0: nobody wants the rest.
///
/// ```
/// use bayesretry_cli::{Exit, run};
///
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// let exit = run(["bayesretry", "replay", "--prior", "0,1"], &mut out, &mut err);
/// assert_eq!(exit, Exit::Usage);
/// let message = String::from_utf8(err).unwrap();
/// assert!(message.starts_with("error: invalid value '0,1' for '--prior <A,B>'"));
/// assert!(message.ends_with("For more information, try '--help'.\n"));
/// ```
pub fn run<I, T>(args: I, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => return report_parse_error(&err, stdout, stderr),
    };
    let mut out = Output::new("<stdout>", stdout);
    let result = match &cli.command {
        Command::Simulate(args) => simulate::run_simulate(args, &mut out),
        Command::Bench(args) => bench::run_bench(args, &mut out),
        Command::Replay(args) => replay::run(args, &mut out),
        Command::Inspect(args) => inspect::run(args, &mut out),
        Command::Audit(audit) => match &audit.command {
            AuditCommand::Verify(args) => audit::verify(args, &mut out),
        },
    };
    match result {
        Ok(()) => Exit::Ok,
        Err(Error::Write { error, .. }) if error.kind() == io::ErrorKind::BrokenPipe => Exit::Ok,
        Err(error) => {
            // Nothing better can be done if stderr itself is gone.
            let _ = writeln!(stderr, "error: {}", error.report());
            error.exit()
        }
    }
}

/// The process entry point of the `bayesretry` binary: [`run`] on the process's
/// arguments and standard streams.
///
/// A panic — a bug, since every input error is an [`Error`] — prints one line
/// naming where it happened, without a backtrace, and exits with status 70
/// ([`Exit::Internal`]).
pub fn main() -> ExitCode {
    panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = message.replace('\n', " ");
        let _ = writeln!(
            io::stderr(),
            "error: internal error{place}: {message} (please report this)"
        );
    }));
    let exit = panic::catch_unwind(|| {
        let mut stdout = io::stdout().lock();
        let mut stderr = io::stderr();
        run(std::env::args_os(), &mut stdout, &mut stderr)
    })
    .unwrap_or(Exit::Internal);
    exit.into()
}

/// Reports what clap found wrong (or the help it was asked for): its whole
/// message, with the usage and any tip (the possible values, a similar flag),
/// as clap renders it.
fn report_parse_error(err: &clap::Error, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Exit {
    let mut rendered = err.render().to_string();
    if !rendered.ends_with('\n') {
        rendered.push('\n');
    }
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            // Help that cannot be written (a full disk) fails as any report
            // does; one nobody reads any more (`| head -1`) does not.
            match Output::new("<stdout>", stdout).text(&rendered) {
                Err(Error::Write { error, .. }) if error.kind() != io::ErrorKind::BrokenPipe => {
                    let error = Error::Write {
                        path: String::from("<stdout>"),
                        error,
                    };
                    let _ = writeln!(stderr, "error: {}", error.report());
                    error.exit()
                }
                _ => Exit::Ok,
            }
        }
        _ => {
            let _ = stderr.write_all(rendered.as_bytes());
            Exit::Usage
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};

    use super::run;
    use crate::exit::Exit;

    /// A stream that fails every write with `kind`, as a full disk or a
    /// closed pipe does.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn help_that_cannot_be_written_fails_unless_nobody_reads_it() {
        for args in [["bayesretry", "--help"], ["bayesretry", "--version"]] {
            let mut err = Vec::new();
            let exit = run(args, &mut Failing(io::ErrorKind::StorageFull), &mut err);
            assert_eq!(exit, Exit::Io, "{args:?}");
            let err = String::from_utf8_lossy(&err);
            assert!(
                err.starts_with("error: <stdout>: write failed: ") && err.lines().count() == 1,
                "{err}"
            );
            let mut err = Vec::new();
            let exit = run(args, &mut Failing(io::ErrorKind::BrokenPipe), &mut err);
            assert_eq!(exit, Exit::Ok, "{args:?}");
            assert!(err.is_empty());
        }
    }
}
