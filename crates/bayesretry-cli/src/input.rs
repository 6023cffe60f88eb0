//! Opening inputs: a named file, or standard input.

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use crate::error::Error;

/// The name standard input goes by in messages.
pub(crate) const STDIN: &str = "<stdin>";

/// An opened input and the name it goes by in messages.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) reader: Box<dyn Read>,
    /// Whether it is a regular file (links followed), not standard input, a
    /// pipe or a device.
    pub(crate) regular: bool,
    /// Whether it is standard input and that is a terminal: a person typed
    /// the command and nothing was piped in.
    pub(crate) terminal: bool,
}

/// The keys that end a terminal's input.
#[cfg(windows)]
const END_OF_INPUT: &str = "Ctrl-Z and Enter";
#[cfg(not(windows))]
const END_OF_INPUT: &str = "Ctrl-D";

impl Input {
    /// When this input is a terminal, says on standard error what `command`
    /// is waiting for (`what`) and how to end it, or which argument (`instead`)
    /// names a file: a command that waits without a word looks hung. Nothing
    /// is said for a file or a pipe.
    pub(crate) fn prompt(&self, command: &str, what: &str, instead: &str) {
        if self.terminal {
            // A hint nobody can see is no reason to fail the command.
            let _ = writeln!(
                io::stderr(),
                "{command}: reading {what} from the terminal: end with {END_OF_INPUT}, \
                 or give {instead}"
            );
        }
    }
}

/// Opens `path`, or standard input when it is `None` or `-`.
pub(crate) fn open(path: Option<&Path>) -> Result<Input, Error> {
    match path {
        None => Ok(stdin()),
        Some(path) if path.as_os_str() == "-" => Ok(stdin()),
        Some(path) => {
            let (file, regular) = open_file(path)?;
            Ok(Input {
                name: path.display().to_string(),
                reader: Box::new(file),
                regular,
                terminal: false,
            })
        }
    }
}

/// Opens the file at `path` for reading, and says whether it is a regular
/// file; a directory is refused here rather than failing at the first read, so
/// that it is reported as missing input.
fn open_file(path: &Path) -> Result<(File, bool), Error> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|error| Error::no_input(&shown, &error))?;
    let metadata = file
        .metadata()
        .map_err(|error| Error::no_input(&shown, &error))?;
    if metadata.is_dir() {
        return Err(Error::no_input(
            &shown,
            &io::Error::from(io::ErrorKind::IsADirectory),
        ));
    }
    Ok((file, metadata.is_file()))
}

fn stdin() -> Input {
    let stdin = io::stdin();
    Input {
        name: String::from(STDIN),
        terminal: stdin.is_terminal(),
        reader: Box::new(stdin.lock()),
        regular: false,
    }
}
