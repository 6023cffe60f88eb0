//! [`Exit`]: the process exit statuses, after BSD's `sysexits.h`.

use std::process::ExitCode;

/// How a `bayesretry` run ended, as the exit status a shell sees.
///
/// The numbers are those of BSD's `sysexits.h`, which scripts and supervisors
/// already know how to read: a script can tell "you called me wrong" (64) from
/// "your data is bad" (65) from "the file is not there" (66) without parsing the
/// message, and retry only what is worth retrying — an I/O error (74) may pass,
/// a corrupt store (65) will not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Exit {
    /// 0: the command did what it was asked.
    Ok,
    /// 64 (`EX_USAGE`): the command line was wrong — an unknown flag, a missing
    /// argument, a value out of range.
    Usage,
    /// 65 (`EX_DATAERR`): the input was read but is wrong — a bad outcome token,
    /// a corrupt store snapshot, a broken audit chain.
    Data,
    /// 66 (`EX_NOINPUT`): an input file does not exist or cannot be opened.
    NoInput,
    /// 70 (`EX_SOFTWARE`): a bug in `bayesretry` itself.
    Internal,
    /// 74 (`EX_IOERR`): reading or writing failed part-way.
    Io,
}

impl Exit {
    /// The numeric status.
    ///
    /// ```
    /// use bayesretry_cli::Exit;
    /// assert_eq!(Exit::Ok.code(), 0);
    /// assert_eq!(Exit::Data.code(), 65);
    /// assert_eq!(Exit::Io.code(), 74);
    /// ```
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Usage => 64,
            Exit::Data => 65,
            Exit::NoInput => 66,
            Exit::Internal => 70,
            Exit::Io => 74,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}
