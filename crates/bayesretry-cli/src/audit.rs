//! `bayesretry audit verify`: a hash-chained audit log checked line by line.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use bayesretry_audit::{Seal, Verifier};

use crate::cli::VerifyArgs;
use crate::error::Error;
use crate::input::{self, STDIN};
use crate::kind::is_snapshot;
use crate::output::Output;

/// How many bytes a read of the log asks for at a time.
const BUFFER: usize = 256 * 1024;

/// How many of the first bytes of a log are kept to tell what it is when its
/// first line fails: a store snapshot names its `version` first.
const HEAD: usize = 512;

/// A reader that keeps the first [`HEAD`] bytes read through it.
struct Head<R> {
    inner: R,
    head: Vec<u8>,
}

impl<R: Read> Head<R> {
    fn new(inner: R) -> Head<R> {
        Head {
            inner,
            head: Vec::new(),
        }
    }
}

impl<R: Read> Read for Head<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        let room = HEAD.saturating_sub(self.head.len());
        if let Some(new) = buf.get(..read.min(room)) {
            self.head.extend_from_slice(new);
        }
        Ok(read)
    }
}

/// Whether `error` is about the first line: what a file that is no audit log
/// at all fails with (the one line of a snapshot has no newline, or is no
/// entry, or is longer than an entry may be).
fn fails_at_first_line(error: &bayesretry_audit::Error) -> bool {
    matches!(
        error,
        bayesretry_audit::Error::IncompleteLine { line: 1 }
            | bayesretry_audit::Error::Malformed { line: 1, .. }
            | bayesretry_audit::Error::LineTooLong { line: 1, .. }
    )
}

/// The error for the store snapshot at `path` (shown as `name`) given as an
/// audit log: what it is, and the command that reads it.
fn a_snapshot(name: String, path: &Path) -> Error {
    Error::NotAuditLog {
        why: format!(
            "it is a store snapshot (the versioned JSON of what a policy learned): show it \
             with `bayesretry inspect {}`",
            path.display()
        ),
        path: name,
    }
}

/// The first [`HEAD`] bytes of the file at `path`, if it can be read again:
/// to tell what a file of a rotated set that failed at its first line is.
fn head_of(path: &Path) -> Option<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD);
    File::open(path)
        .ok()?
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// Runs `audit verify` and writes the verdict to `out`.
pub(crate) fn verify(args: &VerifyArgs, out: &mut Output<'_>) -> Result<(), Error> {
    let mut verifier = Verifier::new();
    if let Some(seal) = args.seal {
        verifier = verifier.with_seal(seal);
    }
    let (name, summary) = match args.logs.as_slice() {
        [one] => {
            let input = input::open(Some(one))?;
            let name = input.name;
            let mut reader = Head::new(input.reader);
            let summary = verifier
                .summarize_reader(BufReader::with_capacity(BUFFER, &mut reader))
                .map_err(|error| {
                    if fails_at_first_line(&error) && is_snapshot(&reader.head) {
                        return a_snapshot(name.clone(), one);
                    }
                    Error::Audit {
                        path: name.clone(),
                        error,
                    }
                })?;
            (name, summary)
        }
        several => {
            let names: Vec<String> = several.iter().map(|p| p.display().to_string()).collect();
            let name = names.join(", ");
            if several.iter().any(|p| p.as_os_str() == "-") {
                return Err(Error::Usage(String::from(
                    "standard input ('-') can only be verified alone, not among several files",
                )));
            }
            let summary = verifier.summarize_files(several).map_err(|error| {
                // a file of the set that is no audit log fails at its first
                // line, and the error names it: one that is a snapshot is
                // said to be one, as when it is given alone
                if let bayesretry_audit::Error::InFile { path, source } = &error {
                    if fails_at_first_line(source) && head_of(path).is_some_and(|h| is_snapshot(&h))
                    {
                        return a_snapshot(path.display().to_string(), path);
                    }
                }
                Error::Audit {
                    path: name.clone(),
                    error,
                }
            })?;
            (name, summary)
        }
    };
    let start = summary.start();
    // A first entry that links to files not given states where a log it
    // continues ends: the chain from there checks, but nothing given shows
    // that such a log exists, so without --partial, or a seal that confirms
    // the link (the verifier has checked the chain against it), the log is
    // not passed as a whole.
    if start.entries() > 0 && args.seal.is_none() && !args.partial {
        let first = match args.logs.first() {
            Some(path) if path.as_os_str() != "-" => path.display().to_string(),
            _ => String::from(STDIN),
        };
        return Err(Error::UnconfirmedStart { path: first, start });
    }
    let sealed = match args.seal {
        // the first file continues files not given: of the entries the seal
        // commits to, it holds those from its start on (the verifier refuses
        // a seal that ends before), and the chain reaching the seal confirms
        // the link, not that the entries before it are kept anywhere
        Some(kept) if start.entries() > 0 => format!(
            ", and holds the last {} of the {} entries of the seal given: the {} before \
             them are in files not given",
            kept.entries().saturating_sub(start.entries()),
            kept.entries(),
            start.entries()
        ),
        Some(kept) => format!(
            ", and holds the {} entries of the seal given",
            kept.entries()
        ),
        None => String::new(),
    };
    let shown = if name == STDIN {
        "<stdin>"
    } else {
        name.as_str()
    };
    let seal = summary.seal();
    out.text(&format!(
        "{shown}: valid: {} entries ({} decisions, {} outcomes), every hash chains{sealed}\n\
         {}{}{}seal: {seal}\n",
        seal.entries() - summary.start().entries(),
        summary.decisions(),
        summary.outcomes(),
        starts(start, args.seal.is_some()),
        losses(summary.dropped_entries(), summary.lost()),
        unanchored(
            seal.entries() - summary.start().entries(),
            args.seal
                .map(|kept| kept.entries().saturating_sub(summary.start().entries())),
        ),
    ))
}

/// The line that says which entries of a valid log of `entries` entries
/// nothing but the chain vouches for, empty if a seal given (of `sealed`
/// entries) covers them all.
///
/// A chain proves that no entry was changed, moved or removed in the middle,
/// but whoever can rewrite the file can cut entries from its end, or rewrite
/// it from some point on and compute every hash again, and it verifies as
/// well: only a seal kept out of their reach anchors it. "valid" alone would
/// read as "whole" (`docs/SPEC.md`, section 11, "An integrity seal, not a
/// signature").
fn unanchored(entries: u64, sealed: Option<u64>) -> String {
    let which = match sealed {
        None if entries == 0 => String::new(),
        None if entries == 1 => String::from("its one entry: "),
        None => format!("all {entries} entries: "),
        Some(sealed) => match entries.saturating_sub(sealed) {
            0 => return String::new(),
            1 => format!("the 1 entry after the seal's {sealed}: "),
            after => format!("the {after} entries after the seal's {sealed}: "),
        },
    };
    format!(
        "unanchored: {which}the chain cannot show entries cut from the end, or rewritten \
         from some point on with their hashes recomputed; keep the seal elsewhere and pass \
         it with --seal\n"
    )
}

/// The line that says where a log starts that does not start at its
/// beginning, empty if it does: its first file begins with a link to files
/// not given (older files of a rotated log, since deleted), which the chain
/// takes on trust. Only those files, or a seal of that point or later kept
/// elsewhere, confirm it (`docs/SPEC.md`, section 11.6); a seal given
/// (`sealed`), which the verifier has checked the chain against, does, but
/// does not show that those files are kept.
fn starts(start: Seal, sealed: bool) -> String {
    if start.entries() == 0 {
        return String::new();
    }
    let confirmed = if sealed {
        "; the seal given confirms the link, not that those files are kept"
    } else {
        ", which nothing given verifies (accepted by --partial); only those files, or \
         that seal kept elsewhere (--seal), confirm the link"
    };
    format!(
        "starts: at entry {}, linked to the end of files not given (their seal: \
         {start}){confirmed}\n",
        start.entries(),
    )
}

/// The line that says records were lost before they reached the log, empty if
/// its `dropped` entries record none: a valid chain shows that nothing
/// written was changed, not that everything was written.
///
/// The number is a lower bound, and said to be one: a writer reopening a file
/// a crash cut records the loss as one record however many went with it, and
/// the entries a crash took from the end leave no trace at all (`docs/SPEC.md`,
/// section 11). A `dropped` entry of count 0 records no loss, and a log whose
/// `dropped` entries add up to 0 is not called incomplete.
fn losses(entries: u64, lost: u64) -> String {
    match (entries, lost) {
        (_, 0) => String::new(),
        (1, _) => format!(
            "incomplete: at least {lost} record(s) lost before reaching the log, as its \
             `dropped` entry records\n"
        ),
        _ => format!(
            "incomplete: at least {lost} record(s) lost before reaching the log, as its \
             {entries} `dropped` entries record\n"
        ),
    }
}

/// The exit status of a verification error: a broken or malformed log is bad
/// data, a failed read an I/O error.
pub(crate) fn exit_of(error: &bayesretry_audit::Error) -> crate::exit::Exit {
    use crate::exit::Exit;
    match error {
        bayesretry_audit::Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => {
            Exit::NoInput
        }
        bayesretry_audit::Error::Io { .. } => Exit::Io,
        bayesretry_audit::Error::LineTooLong { .. }
        | bayesretry_audit::Error::IncompleteLine { .. }
        | bayesretry_audit::Error::Malformed { .. }
        | bayesretry_audit::Error::NotCanonical { .. }
        | bayesretry_audit::Error::UnsupportedVersion { .. }
        | bayesretry_audit::Error::Broken { .. }
        | bayesretry_audit::Error::Discontinuous(_)
        | bayesretry_audit::Error::Shrunk { .. } => Exit::Data,
        bayesretry_audit::Error::InFile { source, .. } => exit_of(source),
        _ => Exit::Internal,
    }
}
